#include "nanoscopy/io/stack_reader.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/micromanager_series.hpp"
#include "nanoscopy/io/yaml_documents.hpp"

namespace nanoscopy {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

bool is_hdf5_extension(const std::string& ext) { return ext == ".h5" || ext == ".hdf5" || ext == ".he5" || ext == ".nxs"; }

// Splits "file.h5:/group/data" into file and dataset; a plain path has no dataset.
// Only splits when the part before the colon names an existing file, so paths
// that contain ':' still work.
std::pair<std::string, std::string> split_dataset(const std::string& spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0) return {spec, ""};
  std::error_code ec;
  if (fs::exists(spec, ec)) return {spec, ""};
  std::string file = spec.substr(0, colon);
  if (fs::exists(file, ec)) return {file, spec.substr(colon + 1)};
  return {spec, ""};
}

}  // namespace

void StackReader::read_float(std::int64_t first, std::int64_t count, float* dst) {
  const auto pixels = static_cast<std::size_t>(count * info_.pixels_per_frame());
  if (info_.type == PixelType::f32) {
    read_raw(first, count, dst);
    return;
  }
  scratch_.resize(pixels * bytes_per_pixel(info_.type));
  read_raw(first, count, scratch_.data());
  convert_to_float(info_.type, scratch_.data(), pixels, dst);
}

std::optional<double> StackInfo::metadata_number(const std::string& key) const {
  for (const auto& [k, text] : metadata) {
    if (k != key) continue;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
      throw InputError(metadata_path, key + " is not a number: '" + text + "'");
    return v;
  }
  return std::nullopt;
}

void StackReader::attach_metadata(const std::string& yaml_path) {
  auto metadata = detail::movie_metadata(yaml_path);
  info_.metadata = std::move(metadata.scalars);
  info_.metadata_yaml = std::move(metadata.yaml);
  info_.metadata_path = yaml_path;
  if (info_.pixel_size_nm > 0) return;
  if (const auto v = info_.metadata_number("Pixelsize"); v && *v > 0) info_.pixel_size_nm = *v;
}

namespace {

// <stem>.yaml beside the stack: Picasso's movie info, or what our simulator writes.
std::unique_ptr<StackReader> with_metadata(std::unique_ptr<StackReader> reader, const std::string& path) {
  const std::string yaml_path = sibling_path(path, ".yaml");
  std::error_code ec;
  if (fs::exists(yaml_path, ec)) plan_input(yaml_path, "the movie's metadata");
  if (fs::is_regular_file(yaml_path, ec)) reader->attach_metadata(yaml_path);
  return reader;
}

std::unique_ptr<StackReader> open_stack_file(const std::string& spec);

}  // namespace

std::unique_ptr<StackReader> open_stack(const std::string& spec) {
  auto reader = open_stack_file(spec);
  return with_metadata(std::move(reader), split_dataset(spec).first);
}

namespace {

std::unique_ptr<StackReader> open_stack_file(const std::string& spec) {
  const auto [path, dataset] = split_dataset(spec);
  plan_input(path, "the input stack");
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "no such file");
  if (fs::is_directory(path, ec)) {
    // Micro-Manager 2's NDTiff dataset is a folder: it reads from the file its index names first.
    const std::string ndtiff = detail::ndtiff_dataset_file(path);
    if (ndtiff.empty()) throw InputError(path, "is a directory, expected an image stack file (or an NDTiff dataset)");
    return open_stack_file(ndtiff);
  }
  // Opening a pipe would wait for a writer for ever.
  if (!fs::is_regular_file(path, ec)) throw InputError(path, "is not a regular file (a pipe, socket or device)");
  const auto size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "cannot read the file size: " + ec.message());
  if (size == 0) throw InputError(path, "the file is empty (0 bytes)");

  std::array<unsigned char, 8> magic{};
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open the file for reading");
    in.read(reinterpret_cast<char*>(magic.data()), magic.size());
  }
  const bool tiff_magic = (magic[0] == 'I' && magic[1] == 'I' && (magic[2] == 42 || magic[2] == 43) && magic[3] == 0) ||
                          (magic[0] == 'M' && magic[1] == 'M' && magic[2] == 0 && (magic[3] == 42 || magic[3] == 43));
  const bool hdf5_magic = std::memcmp(magic.data(), "\x89HDF\r\n\x1a\n", 8) == 0;
  const std::string ext = lower_extension(path);

  if (!dataset.empty() && !hdf5_magic) throw InputError(path, "a dataset was named (':" + dataset + "') but this is not an HDF5 file");
  if (tiff_magic) return detail::open_tiff(path);
  // HDF5 files may carry a user block, so the signature can sit at 512, 1024, ...: trust the extension then.
  if (hdf5_magic || is_hdf5_extension(ext)) return detail::open_hdf5(path, dataset);
  if (ext == ".raw") return detail::open_picasso_raw(path);
  if (std::memcmp(magic.data(), "\x89PNG\r\n\x1a\n", 8) == 0) return detail::open_png(path);
  if (ext == ".tif" || ext == ".tiff" || ext == ".btf" || ext == ".tf8")
    throw InputError(path, "not a TIFF file (no TIFF signature at the start; is it a renamed text or other file?)");
  throw InputError(path, "unknown stack format (expected TIFF/BigTIFF .tif, HDF5 .h5/.hdf5, or Picasso .raw with .yaml, or a PNG image)");
}

}  // namespace

}  // namespace nanoscopy
