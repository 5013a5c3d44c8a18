#include "loc/localize_engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "common/pinned_memory.hpp"
#include "common/parallel_copy.hpp"
#include "common/stage_profile.hpp"
#include "fit/engine_cuda.hpp"
#include "loc/camera_maps_kernels.hpp"
#include "loc/detect_engine_cuda.hpp"
#include "loc/recenter_kernels.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/fault_injection.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/recenter.hpp"

namespace nanoscopy::cuda {
namespace {

// Pageable input is staged in pieces of this size, two buffers in turn.
constexpr std::size_t kStagingPieceBytes = std::size_t{8} << 20;

// A host vector to a new device buffer (synchronous: once per plan).
DeviceBuffer<float> to_device(const std::vector<float>& v) {
  DeviceBuffer<float> d(v.size());
  NANOSCOPY_CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

struct LocalizePlan::Impl {
  int device = 0;
  int box = 0;
  DetectPlan detect;
  FitPlan fit;
  Stream stream;
  ParallelCopy copier;
  DeviceBuffer<unsigned char> d_frames;
  DeviceBuffer<FitResult> d_fits;
  PinnedBuffer<unsigned char> staging[2];
  Event staged[2];  // the upload from staging[i] is done
  PinnedBuffer<Candidate> h_candidates;
  PinnedBuffer<RoiOrigin> h_origins;
  PinnedBuffer<FitResult> h_fits;
  // sCMOS (settings.camera_maps given): the maps on the device, the ROIs in
  // photons and their shifts; the settings convert the fits back to camera units.
  LocalizeSettings settings;
  DeviceBuffer<float> d_offset, d_gain, d_variance;
  DeviceBuffer<float> d_photons, d_shifts;
  // Re-centring (nanoscopy/loc/recenter.hpp): the fits given a second box, that
  // box's origin, pixels and fit, on the device and back on the host.
  float recenter_px = 0;
  DeviceBuffer<std::int32_t> d_moved;
  DeviceBuffer<RoiOrigin> d_moved_origins;
  DeviceBuffer<unsigned long long> d_moved_count;
  DeviceBuffer<unsigned char> d_moved_rois;
  DeviceBuffer<FitResult> d_refits;
  PinnedBuffer<unsigned long long> h_moved_count;
  PinnedBuffer<std::int32_t> h_moved;
  PinnedBuffer<RoiOrigin> h_moved_origins;
  PinnedBuffer<FitResult> h_refits;

  Impl(int gpu, const LocalizeSettings& s)
      : device(gpu), box(s.detect.box), detect(gpu, s.detect, s.regions), fit(gpu, s.fit_in_photons()),
        staged{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)}, settings(s),
        recenter_px(static_cast<float>(s.recenter_px)) {
    if (s.camera_maps) {
      d_offset = to_device(s.camera_maps->offset);
      d_gain = to_device(s.camera_maps->gain);
      d_variance = to_device(s.camera_maps->variance);
    }
  }

  // The fits (`out`) of `count` ROIs of `type` whose top-left pixels lie at `origins`;
  // with maps, each ROI in photons with its shifts first.
  void fit_rois(const void* rois, PixelType type, const RoiOrigin* origins, std::int64_t count, FitResult* out,
                cudaStream_t s) {
    if (!settings.camera_maps) {
      fit.fit_device(rois, type, count, box, box, nullptr, out, s);
      return;
    }
    const auto values = static_cast<std::size_t>(count) * static_cast<std::size_t>(box) * static_cast<std::size_t>(box);
    grow(d_photons, values);
    grow(d_shifts, values);
    const DeviceMaps maps{d_offset.get(), d_gain.get(), d_variance.get(), static_cast<int>(settings.camera_maps->width)};
    launch_rois_to_photons(rois, type == PixelType::u16, origins, count, box, maps, d_photons.get(), d_shifts.get(),
                           s);
    fit.fit_device(d_photons.get(), PixelType::f32, count, box, box, nullptr, out, s, d_shifts.get());
  }

  // The fits far from their box's centre fitted again in boxes around their centres: their
  // count (synchronises the stream), with the second fits, their indices and origins queued
  // for the host (h_refits, h_moved, h_moved_origins) on `s`.
  std::int64_t refit_moved(const ChunkPixels& c, std::int64_t count, cudaStream_t s) {
    const auto n = static_cast<std::size_t>(count);
    grow(d_moved, n);
    grow(d_moved_origins, n);
    grow(d_moved_count, 1);
    grow(h_moved_count, 1);
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(d_moved_count.get(), 0, sizeof(unsigned long long), s));
    launch_recenter_select(d_fits.get(), detect.origins(), count, box, static_cast<int>(c.width),
                           static_cast<int>(c.height), recenter_px, d_moved.get(), d_moved_origins.get(),
                           d_moved_count.get(), s);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(h_moved_count.get(), d_moved_count.get(), sizeof(unsigned long long),
                                         cudaMemcpyDeviceToHost, s));
    stream.synchronize();
    const auto moved = static_cast<std::int64_t>(*h_moved_count.get());
    if (moved == 0) return 0;
    const auto m = static_cast<std::size_t>(moved);
    grow(d_moved_rois, m * static_cast<std::size_t>(box * box) * bytes_per_pixel(c.type));
    grow(d_refits, m);
    launch_recenter_cut(d_frames.get(), c.type == PixelType::u16, c.first_frame, static_cast<int>(c.width),
                        static_cast<int>(c.height), detect.candidates(), d_moved.get(), d_moved_origins.get(), moved,
                        box, d_moved_rois.get(), s);
    fit_rois(d_moved_rois.get(), c.type, d_moved_origins.get(), moved, d_refits.get(), s);
    grow(h_moved, m);
    grow(h_moved_origins, m);
    grow(h_refits, m);
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(h_moved.get(), d_moved.get(), m * sizeof(std::int32_t), cudaMemcpyDeviceToHost, s));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(h_moved_origins.get(), d_moved_origins.get(), m * sizeof(RoiOrigin),
                                         cudaMemcpyDeviceToHost, s));
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(h_refits.get(), d_refits.get(), m * sizeof(FitResult), cudaMemcpyDeviceToHost, s));
    return moved;
  }

  // The converged second fits in place of the first ones (after the stream's downloads).
  void put_back_refits(std::int64_t moved) {
    for (std::int64_t j = 0; j < moved; ++j) {
      const FitResult& r = h_refits.get()[j];
      if (!converged(r.status)) continue;
      const auto k = static_cast<std::size_t>(h_moved.get()[j]);
      const RoiOrigin o = h_moved_origins.get()[j];
      h_fits.get()[k] = r;
      h_origins.get()[k] = o;
      h_candidates.get()[k] = recentred_candidate(h_candidates.get()[k], o, box);
    }
  }

  void upload(const unsigned char* src, std::size_t bytes) {
    const cudaStream_t s = stream.get();
    if (is_pinned(src)) {
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(d_frames.get(), src, bytes, cudaMemcpyHostToDevice, s));
      return;
    }
    const std::size_t piece = std::min(bytes, kStagingPieceBytes);
    grow(staging[0], piece);
    grow(staging[1], piece);
    int k = 0;
    for (std::size_t at = 0; at < bytes; at += piece, k ^= 1) {
      const std::size_t n = std::min(piece, bytes - at);
      staged[k].synchronize();  // the upload that last read staging[k] is done (no-op before the first record)
      copier.copy(staging[k].get(), src + at, n);
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(d_frames.get() + at, staging[k].get(), n, cudaMemcpyHostToDevice, s));
      staged[k].record(s);
    }
  }
};

LocalizePlan::LocalizePlan(int device, const LocalizeSettings& settings) {
  validate_detect_settings(settings.detect);
  DeviceGuard guard(device);
  impl_ = std::make_unique<Impl>(device, settings);
}

LocalizePlan::~LocalizePlan() {
  if (!impl_) return;
  try {
    DeviceGuard guard(impl_->device);
    cudaStreamSynchronize(impl_->stream.get());
  } catch (...) {
  }
}

LocalizePlan::LocalizePlan(LocalizePlan&&) noexcept = default;
LocalizePlan& LocalizePlan::operator=(LocalizePlan&&) noexcept = default;

int LocalizePlan::device() const {
  return impl_->device;
}

std::int64_t LocalizePlan::localize(const ChunkPixels& c, std::vector<Candidate>& candidates,
                                    std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) {
  Impl& im = *impl_;
  validate_chunk(c, im.box);
  if (im.settings.camera_maps) im.settings.camera_maps->check_frame_size(c.width, c.height, "the chunk");
  candidates.clear();
  origins.clear();
  fits.clear();
  if (c.count == 0) return 0;
  DeviceGuard guard(im.device);
  const cudaStream_t s = im.stream.get();
  try {
    const std::size_t bytes = c.bytes();
    grow(im.d_frames, bytes);
    const auto wall0 = std::chrono::steady_clock::now();
    stage_begin(s);
    im.upload(static_cast<const unsigned char*>(c.pixels), bytes);
    stage_mark(s, "upload");
    const std::int64_t found =
        im.detect.detect_device(im.d_frames.get(), c.type, c.first_frame, c.count, c.width, c.height, s);
    const std::int64_t detected = found + im.detect.outside_count();
    if (found == 0) return detected;
    const auto n = static_cast<std::size_t>(found);
    grow(im.d_fits, n);
    im.fit_rois(im.detect.rois(), im.detect.roi_type(), im.detect.origins(), found, im.d_fits.get(), s);
    stage_mark(s, "fit");
    const std::int64_t moved = im.recenter_px > 0 ? im.refit_moved(c, found, s) : 0;
    if (im.recenter_px > 0) stage_mark(s, "re-centred fits");
    grow(im.h_candidates, n);
    grow(im.h_origins, n);
    grow(im.h_fits, n);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(im.h_candidates.get(), im.detect.candidates(), n * sizeof(Candidate),
                                         cudaMemcpyDeviceToHost, s));
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(im.h_origins.get(), im.detect.origins(), n * sizeof(RoiOrigin), cudaMemcpyDeviceToHost, s));
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(im.h_fits.get(), im.d_fits.get(), n * sizeof(FitResult), cudaMemcpyDeviceToHost, s));
    stage_mark(s, "download");
    im.stream.synchronize();
    im.put_back_refits(moved);
    stage_host("localize() to results", std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count());
    im.settings.to_camera_units(im.h_fits.get(), n);
    candidates.assign(im.h_candidates.get(), im.h_candidates.get() + n);
    origins.assign(im.h_origins.get(), im.h_origins.get() + n);
    fits.assign(im.h_fits.get(), im.h_fits.get() + n);
    return detected;
  } catch (...) {
    cudaStreamSynchronize(s);  // no copy may still read the caller's memory or our buffers
    candidates.clear();
    origins.clear();
    fits.clear();
    throw;
  }
}

HostBuffer LocalizePlan::allocate_host(std::size_t bytes) {
  DeviceGuard guard(impl_->device);
  return pinned_host_buffer(bytes);
}

namespace {

class CudaLocalizeEngine final : public LocalizeEngine {
 public:
  CudaLocalizeEngine(int device, const LocalizeSettings& settings) : settings_(settings) {
    plan_.emplace(device, settings_);
  }

  // A chunk larger than the device's free memory is localized in pieces (halved
  // until they fit; the size that fitted is kept for the chunks after it), not failed.
  std::int64_t localize(const ChunkPixels& chunk, std::vector<Candidate>& candidates,
                        std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) override {
    inject_device_fault(chunk.first_frame, chunk.count, plan_->device());
    candidates.clear();
    origins.clear();
    fits.clear();
    std::int64_t detected = 0;
    const std::size_t frame_bytes = chunk.frame_bytes();
    for (std::int64_t done = 0; done < chunk.count;) {
      ChunkPixels piece = chunk;
      piece.pixels = static_cast<const unsigned char*>(chunk.pixels) + static_cast<std::size_t>(done) * frame_bytes;
      piece.first_frame = chunk.first_frame + done;
      piece.count = std::min(chunk.count - done, max_frames_);
      std::int64_t piece_detected = 0;
      try {
        piece_detected = plan_->localize(piece, piece_candidates_, piece_origins_, piece_fits_);
      } catch (const DeviceMemoryError&) {
        if (piece.count == 1) throw;
        max_frames_ = piece.count / 2;
        // A fresh plan: the buffers grown for the larger piece are freed first,
        // so the smaller one has all the free memory.
        const int device = plan_->device();
        plan_.reset();
        plan_.emplace(device, settings_);
        continue;
      }
      candidates.insert(candidates.end(), piece_candidates_.begin(), piece_candidates_.end());
      origins.insert(origins.end(), piece_origins_.begin(), piece_origins_.end());
      fits.insert(fits.end(), piece_fits_.begin(), piece_fits_.end());
      detected += piece_detected;
      done += piece.count;
    }
    return detected;
  }
  HostBuffer allocate_host(std::size_t bytes) override { return plan_->allocate_host(bytes); }
  std::string name() const override { return "cuda:" + std::to_string(plan_->device()); }

 private:
  LocalizeSettings settings_;
  std::optional<LocalizePlan> plan_;
  std::int64_t max_frames_ = std::numeric_limits<std::int64_t>::max();
  std::vector<Candidate> piece_candidates_;
  std::vector<RoiOrigin> piece_origins_;
  std::vector<FitResult> piece_fits_;
};

class CudaUploadOnlyEngine final : public LocalizeEngine {
 public:
  explicit CudaUploadOnlyEngine(int device) : device_(device), stream_(stream_on(device)) {}
  std::int64_t localize(const ChunkPixels& chunk, std::vector<Candidate>& candidates,
                        std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) override {
    candidates.clear();
    origins.clear();
    fits.clear();
    if (chunk.count <= 0) return 0;
    DeviceGuard guard(device_);
    const std::size_t bytes = chunk.bytes();
    grow(frames_, bytes);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(frames_.get(), chunk.pixels, bytes, cudaMemcpyHostToDevice, stream_.get()));
    stream_.synchronize();
    return 0;
  }
  HostBuffer allocate_host(std::size_t bytes) override {
    DeviceGuard guard(device_);
    return pinned_host_buffer(bytes);
  }
  std::string name() const override { return "cuda:" + std::to_string(device_) + " (uploads only)"; }

 private:
  static Stream stream_on(int device) {
    DeviceGuard guard(device);
    return Stream();
  }

  int device_;
  Stream stream_;
  DeviceBuffer<unsigned char> frames_;
};

}  // namespace

std::unique_ptr<LocalizeEngine> make_cuda_localize_engine(int device, const LocalizeSettings& settings) {
  return std::make_unique<CudaLocalizeEngine>(device, settings);
}

std::unique_ptr<LocalizeEngine> make_cuda_upload_only_engine(int device) {
  return std::make_unique<CudaUploadOnlyEngine>(device);
}

}  // namespace nanoscopy::cuda
