#include "nanoscopy/sofi/esrrf.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/finite_pixels.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/frc/frc.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

std::vector<EsrrfSlot> esrrf_time_points(std::int64_t first, std::int64_t last, std::int64_t n, std::int64_t step) {
  std::vector<EsrrfSlot> out;
  if (last <= first) return out;
  if (n <= 0 || n > last - first) n = last - first;
  if (step <= 0) step = n;
  std::int64_t start = first;
  for (; start + n <= last; start += step) out.push_back({start, start + n, 1});
  if (out.empty() || out.back().end < last) out.push_back({start, last, 1});
  return out;
}

namespace {

// The pieces a chunk [c, c + count) is cut into: at every time point's end inside it.
std::vector<std::int64_t> piece_ends(const std::vector<EsrrfSlot>& tps, std::int64_t c, std::int64_t count) {
  std::vector<std::int64_t> ends;
  for (const auto& t : tps)
    if (t.end > c && t.end < c + count) ends.push_back(t.end);
  ends.push_back(c + count);
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

std::int64_t first_frame(const std::vector<EsrrfSlot>& tps) {
  std::int64_t f = std::numeric_limits<std::int64_t>::max();
  for (const auto& t : tps) f = std::min(f, t.begin);
  return f;
}
std::int64_t last_frame(const std::vector<EsrrfSlot>& tps) {
  std::int64_t f = 0;
  for (const auto& t : tps) f = std::max(f, t.end);
  return f;
}

// Walks the piece schedule, calling on_piece(lo, hi, active time points) and then
// on_done(time point) for those ending at hi. The active set is what needs a slot.
template <typename Piece, typename Done>
void walk_pieces(const std::vector<EsrrfSlot>& tps, std::int64_t chunk, Piece on_piece, Done on_done) {
  const std::int64_t lo = first_frame(tps), hi = last_frame(tps);
  for (std::int64_t c = lo; c < hi; c += chunk) {
    const std::int64_t count = std::min(chunk, hi - c);
    std::int64_t p0 = c;
    for (const std::int64_t p1 : piece_ends(tps, c, count)) {
      std::vector<std::size_t> active;
      for (std::size_t i = 0; i < tps.size(); ++i)
        if (tps[i].begin < p1 && tps[i].end > p0) active.push_back(i);
      on_piece(p0, p1, active);
      for (const std::size_t i : active)
        if (tps[i].end <= p1) on_done(i);
      p0 = p1;
    }
  }
}

}  // namespace

int esrrf_slots_needed(const std::vector<EsrrfSlot>& tps, std::int64_t chunk) {
  std::size_t most = 0, open = 0;
  std::vector<bool> opened(tps.size(), false);
  walk_pieces(
      tps, std::max<std::int64_t>(chunk, 1),
      [&](std::int64_t, std::int64_t, const std::vector<std::size_t>& active) {
        for (const std::size_t i : active)
          if (!opened[i]) opened[i] = true, ++open;
        most = std::max(most, open);
      },
      [&](std::size_t) { --open; });
  return static_cast<int>(std::max<std::size_t>(most, 1));
}

std::vector<float> esrrf_finish(const EsrrfSlotSums& s, std::int64_t n, esrrf_math::Temporal kind) {
  std::vector<float> out(s.k.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const esrrf_math::TemporalState st{s.k[i], s.s1[i], s.s2[i], s.p[i], s.last[i]};
    out[i] = static_cast<float>(esrrf_math::temporal_value(st, n, kind));
  }
  return out;
}

void macro_pixel_correct(std::vector<float>& image, std::int64_t wm, std::int64_t hm, int m) {
  const std::int64_t w = wm / m, h = hm / m;
  if (m < 2 || w < 1 || h < 1) return;
  std::vector<double> phase(static_cast<std::size_t>(m * m), 0.0);
  for (std::int64_t y = 0; y < h * m; ++y)
    for (std::int64_t x = 0; x < w * m; ++x)
      phase[static_cast<std::size_t>((y % m) * m + x % m)] += image[static_cast<std::size_t>(y * wm + x)];
  double overall = 0;
  for (auto& v : phase) {
    v /= static_cast<double>(w * h);
    overall += v;
  }
  overall /= static_cast<double>(m * m);
  for (std::int64_t y = 0; y < hm; ++y)
    for (std::int64_t x = 0; x < wm; ++x) {
      const double c = phase[static_cast<std::size_t>((y % m) * m + x % m)];
      if (c != 0) {
        float& v = image[static_cast<std::size_t>(y * wm + x)];
        v = static_cast<float>(v / c * overall);
      }
    }
}

void run_esrrf(EsrrfEngine& engine, const EsrrfSettings& settings, const EsrrfRunInput& in,
               const std::function<void(EsrrfTimePoint&)>& emit) {
  const StackInfo& info = in.reader->info();
  const auto& tps = in.time_points;
  if (tps.empty()) throw std::logic_error("esrrf: no time points");
  const std::int64_t chunk = std::max<std::int64_t>(1, std::min(in.chunk_frames, engine.chunk_capacity()));
  const std::int64_t lo = first_frame(tps), hi = last_frame(tps);
  const std::int64_t pixels = info.pixels_per_frame();
  const int m = settings.magnification;
  const PixelType type = info.type == PixelType::u16 ? PixelType::u16 : PixelType::f32;
  const bool check_nan = info.type == PixelType::f32 || info.type == PixelType::f64;

  FrameSourceOptions options;
  options.type = type;
  options.prefetch = 1;
  options.read_threads = in.read_threads;
  options.allocate = [&](std::size_t bytes) { return engine.allocate_host(bytes); };
  FrameSource source(*in.reader, FrameRange::Resolved{lo, hi}, chunk, options);

  std::vector<int> slot_of(tps.size(), -1);
  std::vector<int> free_slots;
  for (int s = esrrf_slots_needed(tps, chunk) - 1; s >= 0; --s) free_slots.push_back(s);
  std::vector<EsrrfSlot> slots(free_slots.size(), EsrrfSlot{0, 0, 1});
  std::map<std::size_t, std::vector<double>> means;
  EsrrfSlotSums sums;
  Progress progress(in.progress_label, hi - lo, in.quiet);

  FrameChunk fc;
  const std::size_t bytes_per_frame = static_cast<std::size_t>(pixels) * bytes_per_pixel(type);
  while (source.next(fc)) {
    if (check_nan)
      for (std::int64_t j = 0; j < fc.count; ++j)
        require_finite_pixels({static_cast<const float*>(fc.pixels) + j * pixels, static_cast<std::size_t>(pixels)},
                              info.path + " frame " + std::to_string(fc.first + j));
    std::int64_t p0 = fc.first;
    for (const std::int64_t p1 : piece_ends(tps, fc.first, fc.count)) {
      std::vector<std::size_t> active;
      for (std::size_t i = 0; i < tps.size(); ++i)
        if (tps[i].begin < p1 && tps[i].end > p0) active.push_back(i);
      for (const std::size_t i : active) {
        if (slot_of[i] >= 0) continue;
        if (free_slots.empty()) throw std::logic_error("esrrf: out of slots");
        slot_of[i] = free_slots.back();
        free_slots.pop_back();
        slots[static_cast<std::size_t>(slot_of[i])] = tps[i];
        if (in.want_mean) means[i].assign(static_cast<std::size_t>(pixels), 0.0);
      }
      const auto* piece = static_cast<const unsigned char*>(fc.pixels) + static_cast<std::size_t>(p0 - fc.first) * bytes_per_frame;
      engine.accumulate({type, piece, p0, p1 - p0, slots});
      if (in.want_mean) {
        for (const std::size_t i : active)
          for (std::int64_t t = p0; t < p1; ++t) {
            if (!tps[i].contains(t)) continue;
            auto& mean = means[i];
            const std::size_t off = static_cast<std::size_t>(t - p0) * static_cast<std::size_t>(pixels);
            if (type == PixelType::u16) {
              const auto* v = reinterpret_cast<const std::uint16_t*>(piece) + off;
              for (std::size_t k = 0; k < mean.size(); ++k) mean[k] += v[k];
            } else {
              const auto* v = reinterpret_cast<const float*>(piece) + off;
              for (std::size_t k = 0; k < mean.size(); ++k) mean[k] += v[k];
            }
          }
      }
      for (const std::size_t i : active) {
        if (tps[i].end > p1) continue;
        const int s = slot_of[i];
        engine.read_slot(s, sums);
        EsrrfTimePoint tp;
        tp.index = i;
        tp.frames = tps[i].frames();
        tp.image = esrrf_finish(sums, tp.frames, settings.temporal);
        if (in.want_sums) tp.sums = sums;
        if (in.macro_pixel_correction && settings.macro_pixel_correction)
          macro_pixel_correct(tp.image, info.width * m, info.height * m, m);
        if (in.want_mean) {
          const auto& mean = means[i];
          tp.mean.resize(mean.size());
          for (std::size_t k = 0; k < mean.size(); ++k)
            tp.mean[k] = static_cast<float>(mean[k] / static_cast<double>(tp.frames));
          means.erase(i);
        }
        slots[static_cast<std::size_t>(s)] = EsrrfSlot{0, 0, 1};
        free_slots.push_back(s);
        emit(tp);
      }
      p0 = p1;
    }
    progress.update(fc.first + fc.count - lo);
  }
  progress.finish();
}

// ---------------------------------------------------------------- SQUIRREL

std::vector<float> gaussian_blur(std::span<const float> image, std::int64_t w, std::int64_t h, double sigma,
                                 int threads) {
  std::vector<float> out(image.begin(), image.end());
  if (sigma <= 0) return out;
  const int r = static_cast<int>(4.0 * sigma + 0.5);
  std::vector<double> k(static_cast<std::size_t>(2 * r + 1));
  double sum = 0;
  for (int i = -r; i <= r; ++i) sum += k[static_cast<std::size_t>(i + r)] = std::exp(-0.5 * i * i / (sigma * sigma));
  for (auto& v : k) v /= sum;
  auto mirror = [](std::int64_t i, std::int64_t n) {
    const std::int64_t period = 2 * n;
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - 1 - i;
  };
  std::vector<float> tmp(out.size());
  threads = std::max(threads, 1);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      double s = 0;
      for (int i = -r; i <= r; ++i) s += k[static_cast<std::size_t>(i + r)] * image[static_cast<std::size_t>(y * w + mirror(x + i, w))];
      tmp[static_cast<std::size_t>(y * w + x)] = static_cast<float>(s);
    }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      double s = 0;
      for (int i = -r; i <= r; ++i) s += k[static_cast<std::size_t>(i + r)] * tmp[static_cast<std::size_t>(mirror(y + i, h) * w + x)];
      out[static_cast<std::size_t>(y * w + x)] = static_cast<float>(s);
    }
  return out;
}

namespace {

struct Fit {
  double alpha = 0, beta = 0, rse = 0, rsp = 0;
};

// Linear regression of the reference on the blurred image; RSE and Pearson r of alpha b + beta.
Fit regress(const std::vector<float>& b, const std::vector<float>& ref) {
  const double n = static_cast<double>(b.size());
  double mb = 0, mr = 0;
  for (std::size_t i = 0; i < b.size(); ++i) mb += b[i], mr += ref[i];
  mb /= n, mr /= n;
  double sbb = 0, sbr = 0, srr = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double db = b[i] - mb, dr = ref[i] - mr;
    sbb += db * db, sbr += db * dr, srr += dr * dr;
  }
  Fit f;
  f.alpha = sbb > 0 ? sbr / sbb : 0.0;
  f.beta = mr - f.alpha * mb;
  double se = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double e = f.alpha * b[i] + f.beta - ref[i];
    se += e * e;
  }
  f.rse = std::sqrt(se / n);
  const double sign = f.alpha < 0 ? -1.0 : 1.0;
  f.rsp = (sbb > 0 && srr > 0) ? sign * sbr / std::sqrt(sbb * srr) : 0.0;
  return f;
}

// Brent's bounded minimization of f on [a, b] (R. P. Brent, Algorithms for
// Minimization without Derivatives, 1973, "localmin"; scipy's fminbound).
template <typename F>
double brent_min(F f, double a, double b, double xtol) {
  const double golden = 0.5 * (3.0 - std::sqrt(5.0));
  double x = a + golden * (b - a), w = x, v = x;
  double fx = f(x), fw = fx, fv = fx;
  double d = 0, e = 0;
  for (int it = 0; it < 500; ++it) {
    const double mid = 0.5 * (a + b);
    const double tol1 = 1.4901161193847656e-08 * std::abs(x) + xtol / 3.0, tol2 = 2 * tol1;
    if (std::abs(x - mid) <= tol2 - 0.5 * (b - a)) break;
    bool golden_step = true;
    if (std::abs(e) > tol1) {
      double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw), p = (x - v) * q - (x - w) * r;
      q = 2.0 * (q - r);
      if (q > 0) p = -p;
      q = std::abs(q);
      const double etemp = e;
      e = d;
      if (std::abs(p) < std::abs(0.5 * q * etemp) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        const double u = x + d;
        if (u - a < tol2 || b - u < tol2) d = mid >= x ? tol1 : -tol1;
        golden_step = false;
      }
    }
    if (golden_step) {
      e = (x >= mid ? a : b) - x;
      d = golden * e;
    }
    const double u = std::abs(d) >= tol1 ? x + d : x + (d > 0 ? tol1 : -tol1);
    const double fu = f(u);
    if (fu <= fx) {
      (u >= x ? a : b) = x;
      v = w, fv = fw, w = x, fw = fx, x = u, fx = fu;
    } else {
      (u < x ? a : b) = u;
      if (fu <= fw || w == x) {
        v = w, fv = fw, w = u, fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u, fv = fu;
      }
    }
  }
  // The ends themselves (f is often monotone over a sweep's range).
  const double fa0 = f(0.0);
  return fa0 <= fx ? 0.0 : x;
}

}  // namespace

ErrorMapResult squirrel_error_map(std::span<const float> reference, std::int64_t w, std::int64_t h,
                                  std::span<const float> sr, int m, int threads) {
  const std::int64_t wm = w * m, hm = h * m;
  if (static_cast<std::int64_t>(sr.size()) != wm * hm || static_cast<std::int64_t>(reference.size()) != w * h)
    throw std::logic_error("squirrel_error_map: sizes");
  const std::vector<float> ref = m > 1 ? cr_magnify(reference.data(), w, h, m)
                                       : std::vector<float>(reference.begin(), reference.end());
  const double max_sigma = 4.0 / 2.35482 * m;
  auto rse_at = [&](double sigma) { return regress(gaussian_blur(sr, wm, hm, sigma, threads), ref).rse; };
  ErrorMapResult out;
  out.sigma = brent_min(rse_at, 0.0, max_sigma, 1e-3);
  out.sigma_at_bound = std::abs(out.sigma - max_sigma) < 1e-2;
  const std::vector<float> blurred = gaussian_blur(sr, wm, hm, out.sigma, threads);
  const Fit f = regress(blurred, ref);
  out.alpha = f.alpha;
  out.beta = f.beta;
  out.rse = f.rse;
  out.rsp = f.rsp;
  out.map.resize(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i)
    out.map[i] = static_cast<float>(std::abs(f.alpha * blurred[i] + f.beta - ref[i]));
  return out;
}

std::vector<double> logistic_resolution(std::span<const double> res) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const double r : res)
    if (std::isfinite(r)) lo = std::min(lo, r), hi = std::max(hi, r);
  std::vector<double> out(res.size(), std::numeric_limits<double>::quiet_NaN());
  const double m1 = 0.075, m2 = 0.925;
  const double a1 = std::log((1 - m1) / m1), a2 = std::log((1 - m2) / m2);
  for (std::size_t i = 0; i < res.size(); ++i) {
    if (!std::isfinite(res[i])) continue;
    if (!(hi > lo)) {
      out[i] = 0.5;
      continue;
    }
    const double x0 = (a2 * hi - a1 * lo) / (a2 - a1);
    const double k = a1 / (x0 - hi);
    out[i] = 1.0 / (std::exp(-k * (res[i] - x0)) + 1.0);
  }
  return out;
}

std::vector<double> qnr_scores(std::span<const double> rsp, std::span<const double> res) {
  const std::vector<double> n = logistic_resolution(res);
  std::vector<double> out(rsp.size());
  for (std::size_t i = 0; i < rsp.size(); ++i) out[i] = 2 * rsp[i] * n[i] / (rsp[i] + n[i]);
  return out;
}

std::vector<EsrrfSweepRow> esrrf_sweep(const EsrrfSettings& base, const EsrrfSweepInput& in, std::size_t* best) {
  const StackInfo& info = in.reader->info();
  const std::int64_t w = info.width, h = info.height;
  const int m = base.magnification;
  if (in.last - in.first < 4) throw InputError(info.path, "the sweep needs at least 4 frames (odd and even halves)");
  const std::vector<EsrrfSlot> parts{{in.first, in.last, 1}, {in.first, in.last, 2}, {in.first + 1, in.last, 2}};
  std::vector<EsrrfSweepRow> rows;
  std::vector<float> mean;
  for (const double sens : in.sensitivities) {
    for (const double radius : in.radii) {
      EsrrfSettings s = base;
      s.radius = radius;
      s.sensitivity = sens;
      auto engine = in.make_engine({w, h, esrrf_slots_needed(parts, in.chunk_frames)}, s);
      EsrrfRunInput run;
      run.reader = in.reader;
      run.read_threads = in.read_threads;
      run.chunk_frames = in.chunk_frames;
      run.time_points = parts;
      run.want_mean = mean.empty();
      run.macro_pixel_correction = false;
      run.quiet = true;
      std::vector<std::vector<float>> images(3);
      run_esrrf(*engine, s, run, [&](EsrrfTimePoint& tp) {
        images[tp.index] = std::move(tp.image);
        if (tp.index == 0 && !tp.mean.empty()) mean = std::move(tp.mean);
      });
      EsrrfSweepRow row;
      row.radius = radius;
      row.sensitivity = sens;
      const ErrorMapResult em = squirrel_error_map(mean, w, h, images[0], m, in.threads);
      row.rsp = em.rsp;
      row.rse = em.rse;
      row.sigma = em.sigma;
      const FrcResult frc = compute_frc(images[1], images[2], FrcGeometry{w * m, h * m}, FrcThreshold{});
      row.resolution_px = frc.crossing.status == FrcCrossing::Status::never_above
                              ? std::numeric_limits<double>::quiet_NaN()
                              : frc.crossing.resolution_px;
      if (in.each) in.each(row, images[0]);
      rows.push_back(row);
    }
  }
  std::vector<double> rsp, res;
  for (const auto& r : rows) rsp.push_back(r.rsp), res.push_back(r.resolution_px);
  const std::vector<double> qnr = qnr_scores(rsp, res);
  std::size_t b = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].qnr = qnr[i];
    if (std::isfinite(qnr[i]) && (!std::isfinite(qnr[b]) || qnr[i] > qnr[b])) b = i;
  }
  if (best) *best = b;
  return rows;
}

}  // namespace nanoscopy
