#include "nanoscopy/core/camera_maps.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <stdexcept>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/hdf5_images.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {
namespace {

struct MapImage {
  std::int64_t width = 0, height = 0;
  std::vector<float> pixels;
  std::string where;  // "maps.h5:/gain" or "gain.tif"
};

std::string size_text(std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

// One map: a 2-D image (a stack of exactly one frame).
MapImage read_map(const std::string& spec, const std::string& where, const CameraMapFrame& frame) {
  auto reader = open_stack(spec);
  const auto& info = reader->info();
  if (info.frames != 1)
    throw InputError(where, "a camera map must be one 2-D image, but it holds " + std::to_string(info.frames) + " frames of " +
                                size_text(info.width, info.height));
  // Sizes from the file are checked before the pixels are allocated (a sparse 100000x100000 map is a small file).
  if (frame.width > 0 && (info.width != frame.width || info.height != frame.height))
    throw InputError(where, "the camera maps are " + size_text(info.width, info.height) + " pixels but the frames of " +
                                frame.movie + " are " + size_text(frame.width, frame.height));
  if (info.width <= 0 || info.height <= 0 || info.width > kMaxCameraMapPixels / std::max<std::int64_t>(info.height, 1))
    throw InputError(where, "a camera map of " + size_text(info.width, info.height) + " pixels (at most " +
                                std::to_string(kMaxCameraMapPixels) + " pixels)");
  MapImage m{info.width, info.height, std::vector<float>(static_cast<std::size_t>(info.pixels_per_frame())), where};
  reader->read_float(0, 1, m.pixels.data());
  return m;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto comma = s.find(',', start);
    parts.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// InputError naming `where` for a map of the wrong size or with a bad value;
// the first bad pixel is named as (x, y).
void check_map(const std::string& name, const std::vector<float>& map, std::int64_t width, std::int64_t height,
               const std::string& where) {
  if (map.size() != static_cast<std::size_t>(width * height))
    throw InputError(where, "the " + name + " map holds " + std::to_string(map.size()) + " pixels, not " +
                                size_text(width, height));
  const bool gain_map = name == "gain", variance_map = name == "variance";
  for (std::size_t k = 0; k < map.size(); ++k) {
    const float v = map[k];
    const char* problem = !std::isfinite(v)       ? "is not a finite number"
                          : gain_map && !(v > 0)  ? "is not positive (a gain must be > 0 ADU per photoelectron)"
                          : variance_map && v < 0 ? "is negative (a variance must be >= 0)"
                                                  : nullptr;
    if (problem) {
      const auto x = static_cast<std::int64_t>(k) % width, y = static_cast<std::int64_t>(k) / width;
      char value[32];
      std::snprintf(value, sizeof value, "%g", static_cast<double>(v));
      throw InputError(where, name + " map: pixel (" + std::to_string(x) + ", " + std::to_string(y) + ") = " + value + " " +
                                  problem);
    }
  }
}

bool has_hdf5_signature(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 8> magic{};
  in.read(magic.data(), magic.size());
  return in.gcount() == 8 && std::memcmp(magic.data(), "\x89HDF\r\n\x1a\n", 8) == 0;
}

template <typename Pixel>
void convert_roi(const CameraMaps& maps, const Pixel* adu, std::int64_t x0, std::int64_t y0, std::int64_t rw,
                 std::int64_t rh, float* photons, float* shift) {
  if (x0 < 0 || y0 < 0 || rw < 0 || rh < 0 || x0 + rw > maps.width || y0 + rh > maps.height)
    throw std::out_of_range("camera maps: ROI " + size_text(rw, rh) + " at (" + std::to_string(x0) + ", " +
                            std::to_string(y0) + ") leaves the " + size_text(maps.width, maps.height) + " maps");
  for (std::int64_t j = 0; j < rh; ++j) {
    const auto row = static_cast<std::size_t>((y0 + j) * maps.width + x0);
    const auto out = static_cast<std::size_t>(j * rw);
    for (std::int64_t i = 0; i < rw; ++i) {
      const auto k = row + static_cast<std::size_t>(i);
      const auto o = out + static_cast<std::size_t>(i);
      if (photons) photons[o] = scmos_photons(static_cast<float>(adu[o]), maps.offset[k], maps.gain[k]);
      if (shift) shift[o] = scmos_variance_shift(maps.variance[k], maps.gain[k]);
    }
  }
}

}  // namespace

void CameraMaps::validate() const {
  if (width <= 0 || height <= 0) throw InputError(source, "the camera maps are empty");
  check_map("offset", offset, width, height, source);
  check_map("gain", gain, width, height, source);
  check_map("variance", variance, width, height, source);
}

void CameraMaps::check_frame_size(std::int64_t frame_width, std::int64_t frame_height, const std::string& movie) const {
  if (frame_width != width || frame_height != height)
    throw InputError(source, "the camera maps are " + size_text(width, height) + " pixels but the frames of " + movie +
                                 " are " + size_text(frame_width, frame_height));
}

void CameraMaps::to_photons(const float* adu, std::int64_t x0, std::int64_t y0, std::int64_t roi_width,
                            std::int64_t roi_height, float* photons, float* variance_shift) const {
  convert_roi(*this, adu, x0, y0, roi_width, roi_height, photons, variance_shift);
}

void CameraMaps::to_photons(const std::uint16_t* adu, std::int64_t x0, std::int64_t y0, std::int64_t roi_width,
                            std::int64_t roi_height, float* photons, float* variance_shift) const {
  convert_roi(*this, adu, x0, y0, roi_width, roi_height, photons, variance_shift);
}

CameraMaps read_camera_maps(const std::string& spec, const std::string& option, const CameraMapFrame& frame) {
  const auto parts = split_commas(spec);
  for (const auto& part : parts) plan_input(part, "the camera maps (" + option + ")");
  std::array<MapImage, 3> images;
  static constexpr std::array<const char*, 3> names = {"offset", "gain", "variance"};
  if (parts.size() == 1) {
    if (spec.empty()) throw UsageError(option, "no camera maps named (maps.h5, or offset.tif,gain.tif,variance.tif)");
    std::error_code ec;
    if (!std::filesystem::exists(spec, ec)) throw InputError(spec, "no such file");
    if (!has_hdf5_signature(spec))
      throw InputError(spec, "not an HDF5 file: camera maps are one HDF5 file with /offset, /gain and /variance, "
                             "or three files given as offset.tif,gain.tif,variance.tif");
    for (std::size_t k = 0; k < 3; ++k) images[k] = read_map(spec + ":/" + names[k], spec + ":/" + names[k], frame);
  } else if (parts.size() == 3) {
    for (std::size_t k = 0; k < 3; ++k) {
      if (parts[k].empty())
        throw UsageError(option, "the " + std::string(names[k]) + " map's file is missing in '" + spec +
                                     "' (expected offset.tif,gain.tif,variance.tif)");
      images[k] = read_map(parts[k], parts[k], frame);
    }
  } else {
    throw UsageError(option, "'" + spec + "' names " + std::to_string(parts.size()) +
                                 " files; expected one HDF5 file (maps.h5) or three (offset.tif,gain.tif,variance.tif)");
  }
  CameraMaps maps;
  maps.source = spec;
  maps.width = images[0].width;
  maps.height = images[0].height;
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& m = images[k];
    if (m.width != maps.width || m.height != maps.height)
      throw InputError(m.where, "the " + std::string(names[k]) + " map is " + size_text(m.width, m.height) +
                                    " pixels but the offset map (" + images[0].where + ") is " +
                                    size_text(maps.width, maps.height));
    check_map(names[k], m.pixels, m.width, m.height, m.where);
  }
  maps.offset = std::move(images[0].pixels);
  maps.gain = std::move(images[1].pixels);
  maps.variance = std::move(images[2].pixels);
  maps.validate();
  return maps;
}

void write_camera_maps_hdf5(const std::string& path, const CameraMaps& maps, const std::string& software) {
  write_hdf5_images(path,
                    {{"offset", maps.width, maps.height, maps.offset.data(), "camera offset per pixel [ADU]", 0},
                     {"gain", maps.width, maps.height, maps.gain.data(), "camera gain per pixel [ADU per photoelectron]", 0},
                     {"variance", maps.width, maps.height, maps.variance.data(),
                      "read-noise variance per pixel [ADU^2]", 0}},
                    software);
}

void write_camera_maps_tiff(const std::string& offset_path, const std::string& gain_path,
                            const std::string& variance_path, const CameraMaps& maps, const std::string& software) {
  const std::array<std::pair<const std::string*, const std::vector<float>*>, 3> files = {
      {{&offset_path, &maps.offset}, {&gain_path, &maps.gain}, {&variance_path, &maps.variance}}};
  for (const auto& [path, map] : files) {
    const float* page = map->data();
    write_float_pages(*path, maps.width, maps.height, std::span<const float* const>(&page, 1), 0, software);
  }
}

}  // namespace nanoscopy
