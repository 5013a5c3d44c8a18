// The CPU reference of spot detection (detect.hpp). Its float operations must
// round exactly like the CUDA kernels' (detect_math.hpp): no contraction into
// fused multiply-adds, whatever the target flags.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "nanoscopy/loc/detect/detect.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/detect/detect_math.hpp"

#if NANOSCOPY_HAVE_OPENMP
#include <omp.h>
#endif

namespace nanoscopy {

using detect_detail::add;
using detect_detail::mul;
using detect_detail::sub;

void validate_detect_box(int box, const std::string& where) {
  if (box < kMinDetectBox || box > kMaxDetectBox)
    throw UsageError(where, "the detection box must be an odd number of pixels from 3 to 31, got " + std::to_string(box));
  if (box % 2 == 0) throw UsageError(where, "the box must be odd (3, 5, 7, ...), not " + std::to_string(box));
}

void validate_detect_settings(const DetectSettings& s, const std::string& box_where) {
  validate_detect_box(s.box, box_where);
  if (!std::isfinite(s.threshold) || s.threshold <= 0)
    throw UsageError("threshold", "the detection threshold must be a positive number of noise sds");
  if (!(s.dog_sigma1 > 0) || !(s.dog_sigma2 <= kMaxDogSigma) || !(s.dog_sigma1 < s.dog_sigma2))
    throw UsageError("dog_sigma", "the difference-of-Gaussians widths must satisfy 0 < sigma1 < sigma2 <= 10 px");
  if (s.border < 0) throw UsageError("border", "the detection border must not be negative");
  if (!std::isfinite(s.min_net_gradient) || s.min_net_gradient < 0)
    throw UsageError("min net gradient", "the minimum net gradient must be a number >= 0 (camera counts; 0: off)");
}

namespace {

int kernel_radius(double sigma) {
  return static_cast<int>(std::ceil(3.0 * sigma - 1e-9));
}

}  // namespace

std::vector<float> gaussian_weights(double sigma) {
  const int r = std::max(1, kernel_radius(sigma));
  std::vector<double> w(static_cast<std::size_t>(2 * r + 1));
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += w[static_cast<std::size_t>(k + r)] = std::exp(-0.5 * k * k / (sigma * sigma));
  std::vector<float> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(w[i] / sum);
  return out;
}

void check_frame_size(std::int64_t width, std::int64_t height, int box) {
  if (width <= 0 || height <= 0)
    throw UsageError("detect", "frame size " + std::to_string(width) + "×" + std::to_string(height) + " is empty");
  if (width < box || height < box)
    throw InputError("", "frames of " + std::to_string(width) + "×" + std::to_string(height) +
                             " px are smaller than the detection box of " + std::to_string(box) + "×" +
                             std::to_string(box) + " px");
  if (width * height > std::numeric_limits<std::int32_t>::max())
    throw InputError("", "frames of " + std::to_string(width) + "×" + std::to_string(height) +
                             " px are too large to detect spots in");
}

namespace {

// The key of rank k among `keys` (destroyed): radix selection, 11 + 11 + 10 bits,
// keeping only the keys of the chosen bucket after each pass. Exact, O(n).
std::uint32_t select_rank(std::vector<std::uint32_t>& keys, std::size_t k) {
  std::uint32_t prefix = 0;
  std::size_t n = keys.size();
  std::vector<std::uint32_t> hist;
  for (const int shift : {21, 10, 0}) {
    const int bits = shift == 0 ? 10 : 11;
    const std::uint32_t mask = (1u << bits) - 1;
    hist.assign(std::size_t{1} << bits, 0);
    for (std::size_t i = 0; i < n; ++i) ++hist[(keys[i] >> shift) & mask];
    std::uint32_t bin = 0;
    for (; k >= hist[bin]; ++bin) k -= hist[bin];
    prefix |= bin << shift;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (((keys[i] >> shift) & mask) == bin) keys[kept++] = keys[i];
    n = kept;
  }
  return prefix;
}

float noise_sd_of(const float* values, std::int64_t count, std::vector<float>& finite_values,
                  std::vector<std::uint32_t>& keys) {
  finite_values.clear();
  keys.clear();
  for (std::int64_t i = 0; i < count; ++i)
    if (std::isfinite(values[i])) {
      finite_values.push_back(values[i]);
      keys.push_back(detect_detail::order_key(values[i]));
    }
  if (keys.empty()) return std::numeric_limits<float>::quiet_NaN();
  const auto k = static_cast<std::size_t>(detect_detail::median_rank(static_cast<std::int64_t>(keys.size())));
  const float median = detect_detail::from_order_key(select_rank(keys, k));
  keys.resize(finite_values.size());
  for (std::size_t i = 0; i < finite_values.size(); ++i)
    keys[i] = detect_detail::order_key(std::fabs(sub(finite_values[i], median)));
  return detect_detail::noise_sd_from_mad(detect_detail::from_order_key(select_rank(keys, k)));
}

}  // namespace

float robust_noise_sd(const float* values, std::int64_t count) {
  std::vector<float> finite_values;
  std::vector<std::uint32_t> keys;
  return noise_sd_of(values, count, finite_values, keys);
}

std::vector<float> dog_noise_normalization(int width, int height, const DetectSettings& settings) {
  validate_detect_settings(settings);
  check_frame_size(width, height, 1);
  const std::vector<float> w1 = gaussian_weights(settings.dog_sigma1), w2 = gaussian_weights(settings.dog_sigma2);
  const int r1 = static_cast<int>(w1.size() / 2), r2 = static_cast<int>(w2.size() / 2);
  // Σ_i k_a(x, i)·k_b(x, i) of the folded 1D kernels, per coordinate: (aa, ab, bb).
  struct Sums {
    double aa, ab, bb;
  };
  const auto axis = [&](int n) {
    std::vector<Sums> out(static_cast<std::size_t>(n));
    std::vector<double> k1(static_cast<std::size_t>(n)), k2(static_cast<std::size_t>(n));
    for (int x = 0; x < n; ++x) {
      std::fill(k1.begin(), k1.end(), 0.0);
      std::fill(k2.begin(), k2.end(), 0.0);
      for (int t = -r1; t <= r1; ++t)
        k1[static_cast<std::size_t>(detect_detail::reflect(x + t, n))] += w1[static_cast<std::size_t>(t + r1)];
      for (int t = -r2; t <= r2; ++t)
        k2[static_cast<std::size_t>(detect_detail::reflect(x + t, n))] += w2[static_cast<std::size_t>(t + r2)];
      Sums s{0, 0, 0};
      for (int i = 0; i < n; ++i) {
        const double a = k1[static_cast<std::size_t>(i)], b = k2[static_cast<std::size_t>(i)];
        s.aa += a * a;
        s.ab += a * b;
        s.bb += b * b;
      }
      out[static_cast<std::size_t>(x)] = s;
    }
    return out;
  };
  Sums inner{0, 0, 0};  // the unfolded kernels: a pixel far from every edge
  for (int t = -r2; t <= r2; ++t) {
    const double a = std::abs(t) <= r1 ? w1[static_cast<std::size_t>(t + r1)] : 0.0,
                 b = w2[static_cast<std::size_t>(t + r2)];
    inner.aa += a * a;
    inner.ab += a * b;
    inner.bb += b * b;
  }
  const auto variance = [](const Sums& x, const Sums& y) { return x.aa * y.aa - 2 * x.ab * y.ab + x.bb * y.bb; };
  const double v0 = variance(inner, inner);
  const auto sx = axis(width), sy = axis(height);
  std::vector<float> out(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const double v = variance(sx[static_cast<std::size_t>(x)], sy[static_cast<std::size_t>(y)]);
      out[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)] =
          v > 0 ? static_cast<float>(std::sqrt(v0 / v)) : 1.f;
    }
  return out;
}

namespace {

// One thread's buffers, reused frame after frame.
class FrameDetector {
 public:
  explicit FrameDetector(const DetectSettings& s)
      : settings_(s), w1_(gaussian_weights(s.dog_sigma1)), w2_(gaussian_weights(s.dog_sigma2)) {}

  // Steps 1–2 into filtered(); false when the frame has no finite pixel.
  bool filter(const float* frame, int width, int height) {
    const std::int64_t n = static_cast<std::int64_t>(width) * height;
    float lowest = std::numeric_limits<float>::infinity();
    bool any = false;
    for (std::int64_t i = 0; i < n; ++i)
      if (std::isfinite(frame[i])) {
        lowest = std::min(lowest, frame[i]);
        any = true;
      }
    if (!any) return false;
    const int r1 = static_cast<int>(w1_.size() / 2), r2 = static_cast<int>(w2_.size() / 2);
    const int r = std::max(r1, r2);
    if (width != norm_width_ || height != norm_height_) {
      norm_ = dog_noise_normalization(width, height, settings_);
      norm_width_ = width;
      norm_height_ = height;
    }
    padded_.resize(static_cast<std::size_t>(width + 2 * r));
    rows1_.resize(static_cast<std::size_t>(n));
    rows2_.resize(static_cast<std::size_t>(n));
    filtered_.resize(static_cast<std::size_t>(n));
    acc1_.resize(static_cast<std::size_t>(width));
    acc2_.resize(static_cast<std::size_t>(width));
    for (int y = 0; y < height; ++y) {
      const float* src = frame + static_cast<std::int64_t>(y) * width;
      for (int i = 0; i < width + 2 * r; ++i)
        padded_[static_cast<std::size_t>(i)] = sub(src[detect_detail::reflect(i - r, width)], lowest);
      row_pass(w1_, r - r1, width, rows1_.data() + static_cast<std::int64_t>(y) * width);
      row_pass(w2_, r - r2, width, rows2_.data() + static_cast<std::int64_t>(y) * width);
    }
    for (int y = 0; y < height; ++y) {
      column_pass(w1_, rows1_.data(), y, width, height, acc1_.data());
      column_pass(w2_, rows2_.data(), y, width, height, acc2_.data());
      float* out = filtered_.data() + static_cast<std::int64_t>(y) * width;
      const float* norm = norm_.data() + static_cast<std::int64_t>(y) * width;
      for (int x = 0; x < width; ++x)
        out[x] = mul(sub(acc1_[static_cast<std::size_t>(x)], acc2_[static_cast<std::size_t>(x)]), norm[x]);
    }
    return true;
  }

  const std::vector<float>& filtered() const { return filtered_; }

  void detect(const float* frame, std::int64_t frame_index, int width, int height, std::vector<Candidate>& out) {
    if (!filter(frame, width, height)) return;
    const float sd = noise_sd_of(filtered_.data(), static_cast<std::int64_t>(filtered_.size()), finite_, keys_);
    if (!std::isfinite(sd)) return;
    const float level = detect_detail::detection_level(settings_.threshold, sd);
    for (int y = 0; y < height; ++y) {
      const float* row = filtered_.data() + static_cast<std::int64_t>(y) * width;
      for (int x = 0; x < width; ++x) {
        if (!(row[x] > level)) continue;
        if (!detect_detail::is_candidate(filtered_.data(), frame, width, height, x, y, settings_.box, settings_.border,
                                         level))
          continue;
        const float ng = detect_detail::net_gradient(frame, width, height, x, y, settings_.box, units_);
        if (!detect_detail::passes_net_gradient(ng, net_gradient_below_)) continue;
        out.push_back(Candidate{frame_index, x, y, detect_detail::detection_score(row[x], sd), ng});
      }
    }
  }

 private:
  // Each output pixel accumulates its taps in order k = 0, 1, … (as the kernels do).
  void row_pass(const std::vector<float>& w, int offset, int width, float* out) const {
    std::fill(out, out + width, 0.f);
    for (std::size_t k = 0; k < w.size(); ++k) {
      const float wk = w[k];
      const float* p = padded_.data() + offset + k;
      for (int x = 0; x < width; ++x) out[x] = add(out[x], mul(wk, p[x]));
    }
  }
  static void column_pass(const std::vector<float>& w, const float* rows, int y, int width, int height, float* acc) {
    const int r = static_cast<int>(w.size() / 2);
    std::fill(acc, acc + width, 0.f);
    for (std::size_t k = 0; k < w.size(); ++k) {
      const float wk = w[k];
      const float* src =
          rows + static_cast<std::int64_t>(detect_detail::reflect(y + static_cast<int>(k) - r, height)) * width;
      for (int x = 0; x < width; ++x) acc[x] = add(acc[x], mul(wk, src[x]));
    }
  }

  DetectSettings settings_;
  detect_detail::NetGradientUnits units_ = detect_detail::net_gradient_units();
  float net_gradient_below_ = detect_detail::net_gradient_floor(settings_.min_net_gradient);
  std::vector<float> w1_, w2_;
  std::vector<float> padded_, rows1_, rows2_, filtered_, acc1_, acc2_;
  std::vector<float> finite_;
  std::vector<std::uint32_t> keys_;
  std::vector<float> norm_;  // dog_noise_normalization of the last frame size
  int norm_width_ = 0, norm_height_ = 0;
};

}  // namespace

void dog_filter_frame(const float* frame, int width, int height, const DetectSettings& settings, float* out) {
  validate_detect_settings(settings);
  check_frame_size(width, height, 1);
  FrameDetector d(settings);
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  if (d.filter(frame, width, height))
    std::copy(d.filtered().begin(), d.filtered().end(), out);
  else
    std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
}

void detect_cpu(const float* frames, std::int64_t first_frame, std::int64_t count, int width, int height,
                const DetectSettings& settings, int threads, std::vector<Candidate>& out) {
  validate_detect_settings(settings);
  out.clear();
  if (count <= 0) return;
  check_frame_size(width, height, settings.box);
  if (!frames) throw UsageError("detect", "no frames given");
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  std::vector<std::vector<Candidate>> per_frame(static_cast<std::size_t>(count));
  const int workers = static_cast<int>(std::min<std::int64_t>(detect_thread_count(threads), count));
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto work = [&](FrameDetector& d, std::int64_t t) {
    if (failed.load(std::memory_order_relaxed)) return;
    try {
      d.detect(frames + t * n, first_frame + t, width, height, per_frame[static_cast<std::size_t>(t)]);
    } catch (...) {
      if (!failed.exchange(true)) failure = std::current_exception();
    }
  };
#if NANOSCOPY_HAVE_OPENMP
#pragma omp parallel num_threads(workers)
  {
    FrameDetector d(settings);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < count; ++t) work(d, t);
  }
#else
  std::atomic<std::int64_t> next{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < workers; ++i)
    pool.emplace_back([&] {
      FrameDetector d(settings);
      for (std::int64_t t; (t = next.fetch_add(1)) < count;) work(d, t);
    });
  for (auto& th : pool) th.join();
#endif
  if (failure) std::rethrow_exception(failure);
  std::size_t total = 0;
  for (const auto& v : per_frame) total += v.size();
  out.reserve(total);
  for (const auto& v : per_frame) out.insert(out.end(), v.begin(), v.end());
}

template <typename Pixel>
RoiCut<Pixel> cut_rois(const Pixel* frames, std::int64_t first_frame, std::int64_t count, int width, int height,
                       std::span<const Candidate> candidates, int box) {
  validate_detect_box(box, "cut_rois");
  check_frame_size(width, height, box);
  RoiCut<Pixel> set;
  set.box = box;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const std::int64_t roi = static_cast<std::int64_t>(box) * box;
  set.pixels.resize(candidates.size() * static_cast<std::size_t>(roi));
  set.origins.resize(candidates.size());
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const Candidate& c = candidates[k];
    if (c.frame < first_frame || c.frame >= first_frame + count || c.x < 0 || c.x >= width || c.y < 0 || c.y >= height)
      throw UsageError("cut_rois", "candidate (frame " + std::to_string(c.frame) + ", x " + std::to_string(c.x) +
                                       ", y " + std::to_string(c.y) + ") lies outside the frames given");
    const RoiOrigin o = detect_detail::roi_origin(c.x, c.y, box, width, height);
    set.origins[k] = o;
    const Pixel* frame = frames + (c.frame - first_frame) * n;
    Pixel* dst = set.pixels.data() + static_cast<std::int64_t>(k) * roi;
    for (int j = 0; j < box; ++j) {
      const Pixel* src = frame + static_cast<std::int64_t>(o.y0 + j) * width + o.x0;
      std::copy(src, src + box, dst + static_cast<std::int64_t>(j) * box);
    }
  }
  return set;
}

template RoiCut<float> cut_rois(const float*, std::int64_t, std::int64_t, int, int, std::span<const Candidate>, int);
template RoiCut<std::uint16_t> cut_rois(const std::uint16_t*, std::int64_t, std::int64_t, int, int,
                                        std::span<const Candidate>, int);

int detect_thread_count(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace nanoscopy
