// What one fuzz input runs, per target: the bytes become a file (or two) in a
// scratch directory and go through the same reader calls as in the tools. Used
// by the libFuzzer targets (tests/fuzz/fuzz_<target>.cpp) and by
// tests/test_fuzz_regressions.cpp, so that a saved input replays exactly what
// the fuzzer ran.
//
// An entry returns normally (input accepted) or throws nanoscopy::Error (input
// rejected: the expected answer to bad bytes). Anything else is a bug: a crash
// or sanitizer report, another exception type (std::bad_alloc, std::out_of_range
// ...), or a Violation (a reader's result that breaks its own contract).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "h5_recipe.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/frame_size.hpp"
#include "nanoscopy/loc/filter/where.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/params/params.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/sofi/partial.hpp"
#include "nanoscopy/fit2d/partial.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/smre/partial.hpp"

namespace nanoscopy::fuzz {

namespace fs = std::filesystem;

// A reader's answer that breaks its documented contract (not an input error).
struct Violation : std::logic_error {
  using std::logic_error::logic_error;
};

// HDF5 files (stacks, Picasso tables, part files) are written from a text
// recipe (h5_recipe.hpp), see write_hdf5.
//
// Inputs of the targets that need two files (a .yaml beside a .raw or .hdf5):
// YAML text, this line, then the binary file. Without it, the whole input is the
// binary file and no .yaml is written.
inline constexpr std::string_view kSplit = "\n#SPLIT#\n";

inline std::pair<std::string_view, std::string_view> split_input(std::string_view data) {
  const auto at = data.find(kSplit);
  if (at == std::string_view::npos) return {std::string_view(), data};
  return {data.substr(0, at), data.substr(at + kSplit.size())};
}

inline void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw std::runtime_error("fuzz: cannot write " + path.string());
}

// HDF5 inputs are recipes (h5_recipe.hpp) unless this is set and the input starts
// with the HDF5 signature: then its bytes are the file. The fuzz targets set it
// from NANOSCOPY_FUZZ_RAW_HDF5; the regression test always.
inline bool raw_hdf5 = false;
inline constexpr std::string_view kHdf5Signature = "\x89HDF\r\n\x1a\n";

inline void write_hdf5(const fs::path& path, std::string_view data) {
  if (raw_hdf5 && data.substr(0, kHdf5Signature.size()) == kHdf5Signature)
    write_file(path, data);
  else
    h5recipe::write_file(path.string(), data);
}

inline void remove_file(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

// Frames larger than this are not read: a huge frame that the header announces
// is valid input (a compressed TIFF page or an HDF5 dataset of fill values can be
// far larger than the file), and the tools answer it with "out of memory".
inline constexpr std::int64_t kMaxFramePixels = std::int64_t{1} << 22;

// What the tools do with a stack: check its description, then read frames as
// float32 (first, last, and a two-frame chunk) so that the decoders run.
inline void read_stack(StackReader& reader) {
  const StackInfo& info = reader.info();
  if (info.frames < 1 || info.width < 1 || info.height < 1)
    throw Violation("open_stack described an empty stack: " + std::to_string(info.frames) + " frames of " +
                    std::to_string(info.width) + "x" + std::to_string(info.height));
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const auto bpp = static_cast<std::int64_t>(bytes_per_pixel(info.type));
  if (info.width > kMax / info.height || info.width * info.height > kMax / bpp)
    throw Violation("open_stack accepted frames of " + std::to_string(info.width) + "x" +
                    std::to_string(info.height) + " pixels, whose size overflows 64 bits");
  const std::int64_t pixels = info.pixels_per_frame();
  if (pixels > kMaxFramePixels) return;
  std::vector<float> frames(static_cast<std::size_t>(2 * pixels));
  reader.read_float(0, 1, frames.data());
  if (info.frames > 1) reader.read_float(info.frames - 1, 1, frames.data());
  if (info.frames > 2) reader.read_float(info.frames / 2 - 1, 2, frames.data());
}

inline void read_stack(const std::string& spec) {
  const auto reader = open_stack(spec);
  read_stack(*reader);
}

// ---- parameter files ----

// Every tool's schema: a tree that one of them accepts must also survive being
// printed and read back (the --print-params / provenance round trip).
inline void check_params(const ParamTree& tree) {
  static const Schema smre = smre_schema();
  for (const Schema* schema : {&smre, &fit2d_schema(), &sofi_schema(), &frc_schema(), &bench_schema()}) {
    std::optional<Params> params;
    try {
      params.emplace(schema->resolve(tree));
    } catch (const Error&) {
      continue;  // not this tool's file, or a bad value: a UsageError is the right answer
    }
    for (const std::string format : {"prm", "json"}) {
      std::ostringstream printed;
      params->print(printed, format);
      const std::string text = printed.str();
      try {
        const ParamTree again = format == "prm" ? parse_prm(text, "printed.prm") : parse_json(text, "printed.json");
        if (schema->resolve(again).to_json() != params->to_json())
          throw Violation(schema->tool() + " parameters change when printed as " + format + " and read back:\n" + text);
      } catch (const Error& e) {
        throw Violation(schema->tool() + " parameters printed as " + format + " do not read back (" + e.message() +
                        "):\n" + text);
      }
    }
  }
}

inline void run_prm(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "params.prm";
  write_file(path, data);
  check_params(load_param_file(path.string()));
}

inline void run_json(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "params.json";
  write_file(path, data);
  check_params(load_param_file(path.string()));
}

// ---- image stacks ----

inline void run_tiff(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "stack.tif";
  write_file(path, data);
  read_stack(path.string());
}

inline void run_hdf5(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "stack.h5";
  write_hdf5(path, data);
  read_stack(path.string());
}

// YAML part, kSplit, raw part.
inline void run_raw(std::string_view data, const fs::path& dir) {
  const auto [yaml, raw] = split_input(data);
  const fs::path path = dir / "movie.raw", yaml_path = dir / "movie.yaml";
  write_file(path, raw);
  if (yaml.empty())
    remove_file(yaml_path);
  else
    write_file(yaml_path, yaml);
  read_stack(path.string());
}

// ---- localization files ----

inline void check_locs(const LocalizationFile& file) {
  if (file.width < 0 || file.height < 0 || file.frames < 0 || !(file.pixel_size_nm >= 0))
    throw Violation("a localization file with a negative size, frame count or pixel size");
  for (const auto& l : file.locs)
    if (l.frame < 0) throw Violation("a localization in frame " + std::to_string(l.frame));
}

inline void run_locs_csv(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "locs.csv";
  write_file(path, data);
  LocReadOptions options;
  options.pixel_size_nm = 100;
  check_locs(read_localization_file(path.string(), options));
}

// YAML part, kSplit, HDF5 part (as Picasso writes X_locs.hdf5 + X_locs.yaml).
// The HDF5 parts of this and the following targets: see write_hdf5.
inline void run_locs_picasso(std::string_view data, const fs::path& dir) {
  const auto [yaml, hdf5] = split_input(data);
  const fs::path path = dir / "locs.hdf5", yaml_path = dir / "locs.yaml";
  write_hdf5(path, hdf5);
  if (yaml.empty())
    remove_file(yaml_path);
  else
    write_file(yaml_path, yaml);
  check_locs(read_localization_file(path.string()));
}

// ---- part files (fit2d/smre merge, sofi merge) ----

// What fit2d merge and smre merge read from a part: its attributes, and then
// its localizations (fit2d) or its frames (smre).
inline void run_part_file(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "part.h5";
  write_hdf5(path, data);
  try {
    const PartFile part = read_part_file(path.string(), kFit2dPartFormat, "fit2d --frames A:B --partial PART.h5");
    writer_context_from(part);
    part.integer("candidates");
    part.integer("rejected");
    LocReadOptions options;
    options.format = "hdf5";
    check_locs(read_localization_file(path.string(), options));
    return;
  } catch (const Error&) {
    // not a (good) fit2d part: try it as an smre part
  }
  const PartFile part = read_part_file(path.string(), kSmrePartFormat, "smre --frames A:B --partial PART.h5");
  read_stack(path.string() + ":/data");
}

// sofi merge of this one part (reads it, checks its range, closes its open blocks).
inline void run_sofi_partial(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "partial.h5";
  write_hdf5(path, data);
  merge_sofi_partials({path.string()}, 1);
}

// ---- the --where expression (fit2d filter) ----

// Parses the input as an expression and evaluates it on a few rows, among them NaN and infinite values.
inline void run_where(std::string_view data, const fs::path&) {
  const WhereFilter filter(std::string(data), "--where");
  Localization rows[3];
  rows[1].x = rows[1].photons = std::numeric_limits<double>::quiet_NaN();
  rows[2].y = rows[2].lpx = std::numeric_limits<double>::infinity();
  rows[2].frame = -7;
  for (const Localization& l : rows) static_cast<void>(filter.keeps(l));
  if (filter.expression() != data) throw Violation("WhereFilter changed its expression");
}

// ---- the astigmatic 3D calibration (fit2d --calibration, bench simulate movie --calibration) ----

inline void run_calibration(std::string_view data, const fs::path& dir) {
  const fs::path path = dir / "calibration.json";
  write_file(path, data);
  const AstigmaticCalibration c = read_astigmatic_calibration(path.string());
  // validate()'s contract: positive widths over the calibrated range.
  for (int k = 0; k <= 8; ++k) {
    const double z = c.z_min_nm + (c.z_max_nm - c.z_min_nm) * k / 8.0;
    if (!(c.sigma_x_nm(z) > 0) || !(c.sigma_y_nm(z) > 0))
      throw Violation("an accepted calibration has a width that is not positive at z = " + std::to_string(z));
  }
  // and its file round trip.
  const AstigmaticCalibration again = [&] {
    write_astigmatic_calibration((dir / "again.json").string(), c);
    return read_astigmatic_calibration((dir / "again.json").string());
  }();
  if (to_json(again) != to_json(c)) throw Violation("a calibration changes when written and read back");
}

// ---- sCMOS camera maps (fit2d --camera-maps, bench simulate movie --camera-maps) ----

// "WxH" (the movie's frame size; 16x16 when absent or above 2048 a side), kSplit, then the HDF5 file with
// /offset, /gain and /variance. The tools always know the frame size; a map of another size is refused
// before its pixels are read.
inline void run_camera_maps(std::string_view data, const fs::path& dir) {
  const auto [frame_text, hdf5] = split_input(data);
  std::int64_t width = 16, height = 16;
  if (const auto size = parse_frame_size(frame_text); size && size->first <= 2048 && size->second <= 2048)
    std::tie(width, height) = *size;
  const fs::path path = dir / "maps.h5";
  write_hdf5(path, hdf5);
  const CameraMaps maps = read_camera_maps(path.string(), "--camera-maps", {width, height, "the movie"});
  if (maps.width != width || maps.height != height || maps.pixels() != static_cast<std::int64_t>(maps.gain.size()))
    throw Violation("read_camera_maps returned maps of another size than the frames'");
  // A ROI in the corner, as the fit converts it.
  const std::int64_t w = std::min<std::int64_t>(width, 4), h = std::min<std::int64_t>(height, 4);
  std::vector<float> adu(static_cast<std::size_t>(w * h), 200.0f), photons(adu.size()), shift(adu.size());
  maps.to_photons(adu.data(), 0, 0, w, h, photons.data(), shift.data());
}

// ---- the table of targets ----

using Entry = void (*)(std::string_view data, const fs::path& dir);

struct Target {
  const char* name;
  Entry run;
};

inline constexpr Target kTargets[] = {
    {"prm", run_prm},
    {"json", run_json},
    {"tiff", run_tiff},
    {"hdf5", run_hdf5},
    {"raw", run_raw},
    {"locs_csv", run_locs_csv},
    {"locs_picasso", run_locs_picasso},
    {"part_file", run_part_file},
    {"sofi_partial", run_sofi_partial},
    {"where", run_where},
    {"calibration", run_calibration},
    {"camera_maps", run_camera_maps},
};

// The entry of a target by name; nullptr for an unknown name.
inline Entry entry(std::string_view name) {
  for (const auto& t : kTargets)
    if (name == t.name) return t.run;
  return nullptr;
}

}  // namespace nanoscopy::fuzz
