// The CPU localize engine: the CPU detect engine, the regions filter, cut_rois
// and the CPU fitter, one after the other on the host, then the boxes moved onto
// their fits' centres fitted again (recenter.hpp).
#include "nanoscopy/loc/localize_engine.hpp"

#include <algorithm>
#include <span>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/engine.hpp"
#include "nanoscopy/loc/recenter.hpp"

namespace nanoscopy {
namespace {

class CpuLocalizeEngine final : public LocalizeEngine {
 public:
  CpuLocalizeEngine(const LocalizeSettings& settings, int threads)
      : box_(settings.detect.box),
        recenter_px_(static_cast<float>(settings.recenter_px)),
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
    if (c.type == PixelType::u16)
      cut_and_fit(static_cast<const std::uint16_t*>(c.pixels), c, candidates, origins, fits);
    else
      cut_and_fit(frames, c, candidates, origins, fits);
    return detected;
  }

  HostBuffer allocate_host(std::size_t bytes) override { return allocate_plain_host(bytes); }

  std::string name() const override { return fitter_->name(); }

 private:
  // The ROIs of `candidates` cut from the chunk and fitted; then the fits far
  // from their box's centre fitted again in a box around that centre (recenter.hpp).
  template <typename Pixel>
  void cut_and_fit(const Pixel* pixels, const ChunkPixels& c, std::vector<Candidate>& candidates,
                   std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) {
    fit_boxes(pixels, c, candidates, origins, fits);
    std::vector<Candidate> moved;
    std::vector<std::size_t> which;
    for (std::size_t k = 0; k < fits.size(); ++k) {
      RoiOrigin o;
      if (!recentred_origin(fits[k], origins[k], box_, static_cast<int>(c.width), static_cast<int>(c.height),
                            recenter_px_, o))
        continue;
      moved.push_back(recentred_candidate(candidates[k], o, box_));
      which.push_back(k);
    }
    if (moved.empty()) return;
    std::vector<RoiOrigin> moved_origins;
    std::vector<FitResult> refits;
    fit_boxes(pixels, c, moved, moved_origins, refits);
    for (std::size_t j = 0; j < moved.size(); ++j) {
      if (!converged(refits[j].status)) continue;
      const std::size_t k = which[j];
      candidates[k] = moved[j];
      origins[k] = moved_origins[j];
      fits[k] = refits[j];
    }
  }

  template <typename Pixel>
  void fit_boxes(const Pixel* pixels, const ChunkPixels& c, const std::vector<Candidate>& candidates,
                 std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) {
    fits.resize(candidates.size());
    auto rois = cut_rois<Pixel>(pixels, c.first_frame, c.count, c.width, c.height, candidates, box_);
    if (maps_)
      fit_with_maps(rois.pixels.data(), rois.origins, fits);
    else
      fitter_->fit(RoiBatch{rois.pixels.data(), c.type, static_cast<std::int64_t>(candidates.size()), box_, box_, nullptr},
                   fits);
    origins = std::move(rois.origins);
  }

  int box_;
  float recenter_px_;
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
