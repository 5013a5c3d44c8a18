#include "loc/detect_engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "common/stage_profile.hpp"
#include "loc/detect_kernels.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy::cuda {
namespace {

// Frames are filtered in blocks of at most this many pixels (three float
// buffers of it: 192 MiB), and of at most 65535 frames (the grid's z extent).
constexpr std::int64_t kMaxBlockPixels = std::int64_t{1} << 24;
constexpr std::int64_t kMaxBlockFrames = 65535;

// Grows to at least n elements, keeping the first `used` (copied on `stream`).
template <typename T>
void grow_keep(DeviceBuffer<T>& b, std::size_t n, std::size_t used, cudaStream_t stream) {
  if (b.size() >= n) return;
  DeviceBuffer<T> bigger(std::max(n, b.size() + b.size() / 2));
  if (used > 0)
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(bigger.get(), b.get(), used * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(stream));
  b = std::move(bigger);
}

DetectWeights make_weights(const DetectSettings& s) {
  DetectWeights w{};
  const std::vector<float> w1 = gaussian_weights(s.dog_sigma1), w2 = gaussian_weights(s.dog_sigma2);
  w.r1 = static_cast<int>(w1.size() / 2);
  w.r2 = static_cast<int>(w2.size() / 2);
  if (w.r1 > kMaxDogRadius || w.r2 > kMaxDogRadius) throw UsageError("dog_sigma", "filter wider than supported");
  std::copy(w1.begin(), w1.end(), w.w1);
  std::copy(w2.begin(), w2.end(), w.w2);
  return w;
}

int bits_for(std::int64_t values) {
  int bits = 1;
  while (bits < 64 && (std::int64_t{1} << bits) < values) ++bits;
  return bits;
}

}  // namespace

struct DetectPlan::Impl {
  int device = 0;
  DetectSettings settings;
  DetectWeights weights;
  unsigned noise_list = 0;  // noise_list_capacity on this device
  detect_detail::NetGradientUnits units = detect_detail::net_gradient_units();
  Stream stream;  // for detect() from host frames
  DeviceBuffer<unsigned char> upload;
  DeviceBuffer<float> rows1, rows2, filtered, mins, noise_sd, level;
  DeviceBuffer<float> norm;  // dog_noise_normalization for norm_width × norm_height
  int norm_width = 0, norm_height = 0;
  std::vector<Region> regions;
  DeviceBuffer<unsigned char> inside;  // region_mask for norm_width × norm_height; empty without regions
  DeviceBuffer<unsigned long long> keys, sorted, counter;
  DeviceBuffer<unsigned char> sort_temp;
  PinnedBuffer<unsigned long long> h_counter{2};  // candidates kept, candidates outside the regions
  DeviceBuffer<Candidate> candidates;
  DeviceBuffer<RoiOrigin> origins;
  DeviceBuffer<unsigned char> rois;
  std::int64_t count = 0;
  std::int64_t outside = 0;
  PixelType roi_type = PixelType::f32;
  cudaStream_t last_stream = nullptr;
};

DetectPlan::DetectPlan(int device, const DetectSettings& settings, std::vector<Region> regions) {
  validate_detect_settings(settings);
  DeviceGuard guard(device);
  impl_ = std::make_unique<Impl>();
  impl_->device = device;
  impl_->settings = settings;
  impl_->weights = make_weights(settings);
  impl_->noise_list = noise_list_capacity(device);
  impl_->regions = std::move(regions);
  impl_->counter = DeviceBuffer<unsigned long long>(2);
}

DetectPlan::~DetectPlan() {
  if (!impl_) return;
  try {
    DeviceGuard guard(impl_->device);
    // The caller's stream may be gone; freeing the buffers waits for the device anyway.
    cudaStreamSynchronize(impl_->stream.get());
  } catch (...) {
  }
}

DetectPlan::DetectPlan(DetectPlan&&) noexcept = default;
DetectPlan& DetectPlan::operator=(DetectPlan&&) noexcept = default;

std::int64_t DetectPlan::detect_device(const void* d_frames, PixelType type, std::int64_t first_frame,
                                       std::int64_t count, int width, int height, cudaStream_t stream) {
  Impl& im = *impl_;
  if (type != PixelType::u16 && type != PixelType::f32)
    throw UsageError("detect", "frames on the device must be uint16 or float32, not " + to_string(type));
  check_frame_size(width, height, im.settings.box);
  if (count < 0 || (count > 0 && !d_frames)) throw UsageError("detect", "no frames given");
  DeviceGuard guard(im.device);
  im.count = 0;
  im.outside = 0;
  im.roi_type = type;
  im.last_stream = stream;
  if (count == 0) return 0;

  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const std::int64_t bpp = static_cast<std::int64_t>(bytes_per_pixel(type));
  const int box = im.settings.box;
  const std::int64_t roi = static_cast<std::int64_t>(box) * box;
  const std::int64_t block = std::min({count, std::max<std::int64_t>(1, kMaxBlockPixels / n), kMaxBlockFrames});
  const int spacing = box / 2 + 1;  // candidates are at least this far apart (Chebyshev)
  const std::int64_t per_frame =
      ((width + spacing - 1) / spacing) * static_cast<std::int64_t>((height + spacing - 1) / spacing);
  const std::int64_t capacity = block * per_frame;
  const auto pixels = static_cast<std::size_t>(block * n);
  if (dog_needs_row_buffers(im.weights)) {
    grow(im.rows1, pixels);
    grow(im.rows2, pixels);
  }
  grow(im.filtered, pixels);
  grow(im.mins, static_cast<std::size_t>(block));
  grow(im.noise_sd, static_cast<std::size_t>(block));
  grow(im.level, static_cast<std::size_t>(block));
  if (im.keys.size() < static_cast<std::size_t>(capacity)) {
    grow(im.keys, static_cast<std::size_t>(capacity));
    grow(im.sorted, static_cast<std::size_t>(capacity));
    grow(im.sort_temp, sort_keys_temp_bytes(capacity));
  }

  if (width != im.norm_width || height != im.norm_height) {
    const std::vector<float> norm = dog_noise_normalization(width, height, im.settings);
    grow(im.norm, norm.size());
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(im.norm.get(), norm.data(), norm.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    if (!im.regions.empty()) {
      const std::vector<unsigned char> inside = region_mask(im.regions, width, height);
      grow(im.inside, inside.size());
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(im.inside.get(), inside.data(), inside.size(), cudaMemcpyHostToDevice,
                                           stream));
      NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(stream));  // `inside` (pageable) dies at the end of this scope
    }
    NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(stream));  // `norm` (pageable) dies at the end of this scope
    im.norm_width = width;
    im.norm_height = height;
  }

  const auto* raw = static_cast<const unsigned char*>(d_frames);
  std::int64_t total = 0;
  for (std::int64_t b0 = 0; b0 < count; b0 += block) {
    const std::int64_t nb = std::min(block, count - b0);
    FrameView v;
    v.raw = raw + b0 * n * bpp;
    v.raw_u16 = type == PixelType::u16;
    v.frames = nb;
    v.width = width;
    v.height = height;
    launch_frame_min(v, im.mins.get(), stream);
    stage_mark(stream, "detect: frame min");
    launch_dog(v, im.mins.get(), im.weights, im.norm.get(), im.rows1.get(), im.rows2.get(), im.filtered.get(), stream);
    stage_mark(stream, "detect: DoG");
    launch_noise(im.filtered.get(), nb, n, im.settings.threshold, im.noise_list, im.noise_sd.get(), im.level.get(), stream);
    stage_mark(stream, "detect: noise");
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(im.counter.get(), 0, 2 * sizeof(unsigned long long), stream));
    launch_maxima(v, im.filtered.get(), im.level.get(), im.settings, im.regions.empty() ? nullptr : im.inside.get(),
                  im.keys.get(), im.counter.get(), im.counter.get() + 1, capacity, im.units, stream);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(im.h_counter.get(), im.counter.get(), 2 * sizeof(unsigned long long),
                                         cudaMemcpyDeviceToHost, stream));
    stage_mark(stream, "detect: maxima + count");
    NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(stream));
    stage_mark(stream, "detect: (host round trip)");
    const auto found = static_cast<std::int64_t>(im.h_counter[0]);
    im.outside += static_cast<std::int64_t>(im.h_counter[1]);
    if (found > capacity)  // impossible by the spacing of candidates: a broken invariant, not bad data
      throw DeviceError("cuda:" + std::to_string(im.device), "spot detection found more candidates than it can hold");
    if (found == 0) continue;
    grow_keep(im.candidates, static_cast<std::size_t>(total + found), static_cast<std::size_t>(total), stream);
    grow_keep(im.origins, static_cast<std::size_t>(total + found), static_cast<std::size_t>(total), stream);
    grow_keep(im.rois, static_cast<std::size_t>((total + found) * roi * bpp),
              static_cast<std::size_t>(total * roi * bpp), stream);
    sort_keys(im.sort_temp.get(), im.sort_temp.size(), im.keys.get(), im.sorted.get(), found, bits_for(nb * n), stream);
    launch_finalize(v, im.sorted.get(), found, im.filtered.get(), im.noise_sd.get(), first_frame + b0, box, im.units,
                    im.candidates.get() + total, im.origins.get() + total, im.rois.get() + total * roi * bpp, stream);
    stage_mark(stream, "detect: sort + ROIs");
    total += found;
  }
  im.count = total;
  return total;
}

const Candidate* DetectPlan::candidates() const {
  return impl_->candidates.get();
}
const RoiOrigin* DetectPlan::origins() const {
  return impl_->origins.get();
}
const void* DetectPlan::rois() const {
  return impl_->rois.get();
}
PixelType DetectPlan::roi_type() const {
  return impl_->roi_type;
}
std::int64_t DetectPlan::candidate_count() const {
  return impl_->count;
}
std::int64_t DetectPlan::outside_count() const {
  return impl_->outside;
}
int DetectPlan::device() const {
  return impl_->device;
}
const DetectSettings& DetectPlan::settings() const {
  return impl_->settings;
}

void DetectPlan::detect(const float* frames, std::int64_t first_frame, std::int64_t count, int width, int height,
                        std::vector<Candidate>& out) {
  Impl& im = *impl_;
  out.clear();
  check_frame_size(width, height, im.settings.box);
  if (count <= 0) return;
  if (!frames) throw UsageError("detect", "no frames given");
  DeviceGuard guard(im.device);
  const auto bytes = static_cast<std::size_t>(count * width * height) * sizeof(float);
  grow(im.upload, bytes);
  NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(im.upload.get(), frames, bytes, cudaMemcpyHostToDevice, im.stream.get()));
  detect_device(im.upload.get(), PixelType::f32, first_frame, count, width, height, im.stream.get());
  download(&out, nullptr, nullptr, nullptr);
}

void DetectPlan::download(std::vector<Candidate>* candidates, std::vector<RoiOrigin>* origins,
                          std::vector<float>* rois_f32, std::vector<std::uint16_t>* rois_u16) {
  Impl& im = *impl_;
  DeviceGuard guard(im.device);
  NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(im.last_stream));
  const auto n = static_cast<std::size_t>(im.count);
  const auto roi = static_cast<std::size_t>(im.settings.box) * static_cast<std::size_t>(im.settings.box);
  if (candidates) {
    candidates->resize(n);
    if (n)
      NANOSCOPY_CUDA_CHECK(
          cudaMemcpy(candidates->data(), im.candidates.get(), n * sizeof(Candidate), cudaMemcpyDeviceToHost));
  }
  if (origins) {
    origins->resize(n);
    if (n)
      NANOSCOPY_CUDA_CHECK(
          cudaMemcpy(origins->data(), im.origins.get(), n * sizeof(RoiOrigin), cudaMemcpyDeviceToHost));
  }
  if (rois_f32) {
    if (n && im.roi_type != PixelType::f32) throw UsageError("detect", "the ROIs are uint16, not float32");
    rois_f32->resize(n * roi);
    if (n)
      NANOSCOPY_CUDA_CHECK(
          cudaMemcpy(rois_f32->data(), im.rois.get(), n * roi * sizeof(float), cudaMemcpyDeviceToHost));
  }
  if (rois_u16) {
    if (n && im.roi_type != PixelType::u16) throw UsageError("detect", "the ROIs are float32, not uint16");
    rois_u16->resize(n * roi);
    if (n)
      NANOSCOPY_CUDA_CHECK(
          cudaMemcpy(rois_u16->data(), im.rois.get(), n * roi * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  }
}

namespace {

class CudaDetectEngine final : public DetectEngine {
 public:
  CudaDetectEngine(int device, const DetectSettings& settings) : plan_(device, settings) {}
  void detect(const float* frames_host, std::int64_t first_frame, std::int64_t count, int width, int height,
              std::vector<Candidate>& out) override {
    plan_.detect(frames_host, first_frame, count, width, height, out);
  }
  std::string name() const override { return "cuda:" + std::to_string(plan_.device()); }

 private:
  DetectPlan plan_;
};

}  // namespace

std::unique_ptr<DetectEngine> make_cuda_detect_engine(int device, const DetectSettings& settings) {
  return std::make_unique<CudaDetectEngine>(device, settings);
}

}  // namespace nanoscopy::cuda
