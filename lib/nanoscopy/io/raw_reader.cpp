// Picasso .raw movies: headerless frames, (T, Y, X), described by the .yaml of
// the same stem beside them (Width, Height, Frames, Data Type as a numpy name,
// Byte Order '<' or '>'). Frames are read with pread at their offsets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/yaml_documents.hpp"

namespace nanoscopy::detail {
namespace {

namespace fs = std::filesystem;

std::optional<PixelType> numpy_type(const std::string& name) {
  if (name == "uint8") return PixelType::u8;
  if (name == "uint16") return PixelType::u16;
  if (name == "int16") return PixelType::i16;
  if (name == "uint32") return PixelType::u32;
  if (name == "int32") return PixelType::i32;
  if (name == "float32") return PixelType::f32;
  if (name == "float64") return PixelType::f64;
  return std::nullopt;
}

// Picasso's metadata may span several YAML documents; the movie's own comes first and holds Width.
YAML::Node movie_document(const std::string& yaml_path) {
  const std::vector<YAML::Node> documents =
      read_yaml_documents(yaml_path, "the .yaml that describes the .raw movie");
  for (const auto& doc : documents)
    if (doc.IsMap() && doc["Width"]) return doc;
  throw InputError(yaml_path, "no YAML document with the movie's Width, Height and Frames");
}

std::int64_t positive_integer(const YAML::Node& doc, const char* key, const std::string& yaml_path) {
  const YAML::Node node = doc[key];
  if (!node) throw InputError(yaml_path, std::string("the movie metadata lacks '") + key + "'");
  std::int64_t value = 0;
  try {
    value = node.as<std::int64_t>();
  } catch (const YAML::Exception&) {
    throw InputError(yaml_path, std::string("'") + key + "' is not a whole number");
  }
  if (value <= 0)
    throw InputError(yaml_path, std::string("'") + key + "' must be positive, not " + std::to_string(value));
  return value;
}

std::string text_value(const YAML::Node& doc, const char* key, const std::string& yaml_path) {
  const YAML::Node node = doc[key];
  if (!node) throw InputError(yaml_path, std::string("the movie metadata lacks '") + key + "'");
  if (!node.IsScalar()) throw InputError(yaml_path, std::string("'") + key + "' is not a single value");
  return node.Scalar();
}

// Camera.Pixelsize (Picasso's flat key), a nested Camera: {Pixelsize: } or plain Pixelsize, in nm.
double pixel_size_nm(const YAML::Node& doc) {
  const auto number = [](const YAML::Node& node) {
    if (!node || !node.IsScalar()) return 0.0;
    // from_chars, not yaml-cpp's stream conversion: that one follows the global
    // locale, and "160.5" would not parse under a decimal-comma locale.
    const std::string& text = node.Scalar();
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return 0.0;
    return std::isfinite(v) && v > 0 ? v : 0.0;
  };
  if (const double v = number(doc["Camera.Pixelsize"]); v > 0) return v;
  if (const YAML::Node camera = doc["Camera"]; camera && camera.IsMap())
    if (const double v = number(camera["Pixelsize"]); v > 0) return v;
  return number(doc["Pixelsize"]);
}

void swap_bytes(unsigned char* data, std::size_t count, std::size_t width) {
  for (std::size_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

class PicassoRawReader final : public StackReader {
 public:
  PicassoRawReader(StackInfo info, int fd, bool swap) : fd_(fd), swap_(swap) { info_ = std::move(info); }
  ~PicassoRawReader() override { ::close(fd_); }
  PicassoRawReader(const PicassoRawReader&) = delete;
  PicassoRawReader& operator=(const PicassoRawReader&) = delete;

  // The same file opened again: the kernel keeps read-ahead per open file, and
  // threads reading different parts of a cold file through one descriptor (or
  // a dup of it) spoil each other's. Refuses a file replaced since.
  std::unique_ptr<StackReader> another_reader() const override {
    const int fd = ::open(info_.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw InputError(info_.path, std::string("cannot open the movie for another reading thread: ") +
                                       std::strerror(errno));
    auto reader = std::make_unique<PicassoRawReader>(info_, fd, swap_);
    struct stat mine {}, theirs {};
    if (::fstat(fd_, &mine) != 0 || ::fstat(fd, &theirs) != 0 || mine.st_dev != theirs.st_dev ||
        mine.st_ino != theirs.st_ino)
      throw InputError(info_.path, "the movie was replaced while it was being read");
    return reader;
  }

  void will_read(std::int64_t first, std::int64_t count) override {
    if (first < 0 || count <= 0 || first + count > info_.frames) return;
    ::posix_fadvise(fd_, static_cast<off_t>(first * info_.bytes_per_frame()),
                    static_cast<off_t>(count * info_.bytes_per_frame()), POSIX_FADV_WILLNEED);  // a hint: errors ignored
  }

  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    const std::string where = info_.path + ", frame " + std::to_string(first);
    if (first < 0 || count < 0 || first + count > info_.frames)
      throw InputError(where, "frames " + std::to_string(first) + " to " + std::to_string(first + count - 1) +
                                  " lie outside the movie of " + std::to_string(info_.frames) + " frames");
    const auto total = static_cast<std::size_t>(count * info_.bytes_per_frame());
    auto* out = static_cast<unsigned char*>(dst);
    std::size_t done = 0;
    auto offset = static_cast<off_t>(first * info_.bytes_per_frame());
    while (done < total) {
      const ssize_t n = ::pread(fd_, out + done, total - done, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(where, std::string("cannot read the movie: ") + std::strerror(errno));
      if (n == 0) throw InputError(where, "the movie ended early (was it truncated after opening?)");
      done += static_cast<std::size_t>(n);
      offset += n;
    }
    const std::size_t width = bytes_per_pixel(info_.type);
    if (swap_ && width > 1) swap_bytes(out, total / width, width);
  }

 private:
  int fd_;
  bool swap_;
};

}  // namespace

std::unique_ptr<StackReader> open_picasso_raw(const std::string& path) {
  const std::string yaml_path = fs::path(path).replace_extension(".yaml").string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "no such file");
  if (!fs::exists(yaml_path, ec))
    throw InputError(path, "a Picasso .raw movie needs its metadata beside it, but " + yaml_path + " does not exist");
  const YAML::Node doc = movie_document(yaml_path);

  StackInfo info;
  info.path = path;
  info.format = "picasso-raw";
  info.width = positive_integer(doc, "Width", yaml_path);
  info.height = positive_integer(doc, "Height", yaml_path);
  info.frames = positive_integer(doc, "Frames", yaml_path);
  const std::string type_name = text_value(doc, "Data Type", yaml_path);
  const auto type = numpy_type(type_name);
  if (!type)
    throw InputError(yaml_path, "unsupported Data Type '" + type_name +
                                    "' (supported: uint8, uint16, int16, uint32, int32, float32, float64)");
  info.type = *type;
  std::string byte_order = doc["Byte Order"] ? text_value(doc, "Byte Order", yaml_path) : std::string("<");
  if (byte_order != "<" && byte_order != ">" && byte_order != "=" && byte_order != "|")
    throw InputError(yaml_path, "Byte Order must be '<' or '>', not '" + byte_order + "'");
  constexpr bool native_big = std::endian::native == std::endian::big;
  const bool big_endian = byte_order == ">" || (native_big && (byte_order == "=" || byte_order == "|"));
  info.pixel_size_nm = pixel_size_nm(doc);

  constexpr auto max_count = std::numeric_limits<std::int64_t>::max();
  const auto bpp = static_cast<std::int64_t>(bytes_per_pixel(info.type));
  if (info.width > max_count / info.height || info.pixels_per_frame() > max_count / bpp ||
      info.bytes_per_frame() > max_count / info.frames)
    throw InputError(yaml_path, "Width x Height x Frames is too large");
  const std::int64_t expected = info.bytes_per_frame() * info.frames;

  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open the movie: ") + std::strerror(errno));
  auto reader = std::make_unique<PicassoRawReader>(info, fd, big_endian != native_big);
  const auto size = static_cast<std::int64_t>(fs::file_size(path, ec));
  if (ec) throw InputError(path, "cannot read the file size: " + ec.message());
  const std::string layout = std::to_string(info.frames) + " frames of " + std::to_string(info.width) + "x" +
                             std::to_string(info.height) + " " + to_string(info.type) + " (" +
                             std::to_string(expected) + " bytes, from " + fs::path(yaml_path).filename().string() + ")";
  if (size < expected)
    throw InputError(path, "the movie is truncated: " + std::to_string(size) + " bytes, expected " + layout);
  if (size > expected)
    throw InputError(
        path, "the movie is longer than its metadata says: " + std::to_string(size) + " bytes, expected " + layout);
  return reader;
}

}  // namespace nanoscopy::detail
