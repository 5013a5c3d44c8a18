// Single PNG images (8- or 16-bit grey, or colour converted to grey by libpng's
// simplified API) as one-frame stacks: test images such as scikit-image's
// camera.png are PNGs.
#include <cstring>
#include <png.h>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/formats.hpp"

namespace nanoscopy::detail {

namespace {

class PngReader final : public StackReader {
 public:
  PngReader(StackInfo info, std::vector<unsigned char> pixels) : pixels_(std::move(pixels)) { info_ = std::move(info); }

  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    if (first < 0 || count < 0 || first + count > 1)
      throw InputError(info_.path, "a PNG holds one frame; frames " + std::to_string(first) + ".." +
                                       std::to_string(first + count - 1) + " were asked for");
    if (count == 1) std::memcpy(dst, pixels_.data(), pixels_.size());
  }

 private:
  std::vector<unsigned char> pixels_;
};

}  // namespace

std::unique_ptr<StackReader> open_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw InputError(path, std::string("not a readable PNG: ") + image.message);
  const bool deep = (image.format & PNG_FORMAT_FLAG_LINEAR) != 0;  // 16-bit samples
  image.format = deep ? PNG_FORMAT_LINEAR_Y : PNG_FORMAT_GRAY;
  StackInfo info;
  info.frames = 1;
  info.width = image.width;
  info.height = image.height;
  info.type = deep ? PixelType::u16 : PixelType::u8;
  info.format = "png";
  info.path = path;
  std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw InputError(path, "the PNG is damaged: " + why);
  }
  return std::make_unique<PngReader>(std::move(info), std::move(pixels));
}

}  // namespace nanoscopy::detail
