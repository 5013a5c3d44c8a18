// The CPU localize engine: the CPU detect engine, the regions filter, cut_rois
// and the CPU fitter, one after the other on the host.
#include "nanoscopy/loc/localize_engine.hpp"

#include <algorithm>
#include <span>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/engine.hpp"

namespace nanoscopy {
namespace {

class CpuLocalizeEngine final : public LocalizeEngine {
 public:
  CpuLocalizeEngine(const LocalizeSettings& settings, int threads)
      : box_(settings.detect.box),
        regions_(settings.regions),
        detector_(make_cpu_detect_engine(settings.detect, threads)),
        maps_(settings.camera_maps),
        settings_(settings),
        fitter_(make_cpu_fit_engine(settings.fit_in_photons(), threads)) {
    validate_detect_settings(settings.detect);
    if (maps_ && settings.fit.estimator == Estimator::lsq)
      throw UsageError("localize", "camera maps need the wlsq or mle estimator");
  }

  std::int64_t localize(const ChunkPixels& c, std::vector<Candidate>& candidates, std::vector<RoiOrigin>& origins,
                        std::vector<FitResult>& fits) override {
    validate_chunk(c, box_);
    candidates.clear();
    origins.clear();
    fits.clear();
    if (c.count == 0) return 0;
    const auto n = static_cast<std::size_t>(c.count * c.width * c.height);
    const float* frames = static_cast<const float*>(c.pixels);
    if (c.type == PixelType::u16) {
      as_float_.resize(n);
      convert_to_float(PixelType::u16, c.pixels, n, as_float_.data());
      frames = as_float_.data();
    }
    detector_->detect(frames, c.first_frame, c.count, c.width, c.height, candidates);
    const auto detected = static_cast<std::int64_t>(candidates.size());
    // Before cutting and fitting: a candidate outside the regions costs no fit.
    std::erase_if(candidates, [&](const Candidate& k) { return !in_regions(regions_, k.x, k.y); });
    fits.resize(candidates.size());
    const auto count = static_cast<std::int64_t>(candidates.size());
    if (c.type == PixelType::u16) {
      auto rois = cut_rois<std::uint16_t>(static_cast<const std::uint16_t*>(c.pixels), c.first_frame, c.count,
                                          c.width, c.height, candidates, box_);
      if (maps_)
        fit_with_maps(rois.pixels.data(), rois.origins, fits);
      else
        fitter_->fit(RoiBatch{rois.pixels.data(), PixelType::u16, count, box_, box_, nullptr}, fits);
      origins = std::move(rois.origins);
    } else {
      auto rois = cut_rois<float>(frames, c.first_frame, c.count, c.width, c.height, candidates, box_);
      if (maps_)
        fit_with_maps(rois.pixels.data(), rois.origins, fits);
      else
        fitter_->fit(RoiBatch{rois.pixels.data(), PixelType::f32, count, box_, box_, nullptr}, fits);
      origins = std::move(rois.origins);
    }
    return detected;
  }

  HostBuffer allocate_host(std::size_t bytes) override { return allocate_plain_host(bytes); }

  std::string name() const override { return fitter_->name(); }

 private:
  int box_;
  std::vector<Region> regions_;
  // Each ROI in photons with its variance shift from the maps, fitted, and α, β
  // back in the camera's units (what to_localization converts to photons).
  template <typename Pixel>
  void fit_with_maps(const Pixel* rois, const std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) {
    const std::int64_t n = static_cast<std::int64_t>(box_) * box_;
    const auto count = static_cast<std::int64_t>(origins.size());
    photons_.resize(static_cast<std::size_t>(count * n));
    shift_.resize(photons_.size());
    for (std::int64_t k = 0; k < count; ++k)
      maps_->to_photons(rois + k * n, origins[k].x0, origins[k].y0, box_, box_, photons_.data() + k * n,
                        shift_.data() + k * n);
    fitter_->fit(RoiBatch{photons_.data(), PixelType::f32, count, box_, box_, nullptr, shift_.data()}, fits);
    settings_.to_camera_units(fits.data(), fits.size());
  }

  std::unique_ptr<DetectEngine> detector_;
  std::shared_ptr<const CameraMaps> maps_;
  LocalizeSettings settings_;  // for the maps' conversion back to camera units
  std::unique_ptr<FitEngine> fitter_;
  std::vector<float> as_float_;
  std::vector<float> photons_, shift_;
};

}  // namespace

std::unique_ptr<LocalizeEngine> make_cpu_localize_engine(const LocalizeSettings& settings, int threads) {
  return std::make_unique<CpuLocalizeEngine>(settings, threads);
}

}  // namespace nanoscopy
