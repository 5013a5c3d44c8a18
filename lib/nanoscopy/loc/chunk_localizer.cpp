#include "nanoscopy/loc/chunk_localizer.hpp"

#include <cstdlib>
#include <new>
#include <span>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/loc/detect.hpp"

namespace nanoscopy {
namespace {

class CpuChunkLocalizer final : public ChunkLocalizer {
 public:
  CpuChunkLocalizer(const DetectSettings& detect, const FitSettings& fit, int threads)
      : box_(detect.box),
        detector_(make_cpu_detector(detect, threads)),
        fitter_(make_cpu_fit_engine(fit, threads)) {
    validate_detect_settings(detect);
  }

  void localize(const ChunkPixels& c, std::vector<Candidate>& candidates, std::vector<RoiOrigin>& origins,
                std::vector<FitResult>& fits) override {
    if (c.type != PixelType::u16 && c.type != PixelType::f32)
      throw UsageError("localize", "frames must be uint16 or float32, not " + to_string(c.type));
    if (c.count < 0 || (c.count > 0 && !c.pixels)) throw UsageError("localize", "no frames given");
    check_frame_size(c.width, c.height, box_);
    candidates.clear();
    origins.clear();
    fits.clear();
    if (c.count == 0) return;
    const auto n = static_cast<std::size_t>(c.count * c.width * c.height);
    const float* frames = static_cast<const float*>(c.pixels);
    if (c.type == PixelType::u16) {
      as_float_.resize(n);
      convert_to_float(PixelType::u16, c.pixels, n, as_float_.data());
      frames = as_float_.data();
    }
    detector_->detect(frames, c.first_frame, c.count, c.width, c.height, candidates);
    fits.resize(candidates.size());
    const auto count = static_cast<std::int64_t>(candidates.size());
    if (c.type == PixelType::u16) {
      auto rois = cut_rois<std::uint16_t>(static_cast<const std::uint16_t*>(c.pixels), c.first_frame, c.count,
                                          c.width, c.height, candidates, box_);
      fitter_->fit(RoiBatch{rois.pixels.data(), PixelType::u16, count, box_, box_, nullptr}, fits);
      origins = std::move(rois.origins);
    } else {
      auto rois = cut_rois<float>(frames, c.first_frame, c.count, c.width, c.height, candidates, box_);
      fitter_->fit(RoiBatch{rois.pixels.data(), PixelType::f32, count, box_, box_, nullptr}, fits);
      origins = std::move(rois.origins);
    }
  }

  HostBuffer allocate_host(std::size_t bytes) override {
    void* p = std::malloc(bytes > 0 ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return HostBuffer(p, [](void* q) { std::free(q); });
  }

  std::string name() const override { return fitter_->name(); }

 private:
  int box_;
  std::unique_ptr<Detector> detector_;
  std::unique_ptr<FitEngine> fitter_;
  std::vector<float> as_float_;
};

}  // namespace

std::unique_ptr<ChunkLocalizer> make_cpu_chunk_localizer(const DetectSettings& detect, const FitSettings& fit,
                                                         int threads) {
  return std::make_unique<CpuChunkLocalizer>(detect, fit, threads);
}

}  // namespace nanoscopy
