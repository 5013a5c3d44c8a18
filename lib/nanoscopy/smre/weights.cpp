#include "nanoscopy/smre/weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/progress.hpp"

namespace nanoscopy {

namespace {

double mu_s(double n) { return std::pow(n - 0.5, 0.25); }
double sd_s(double n) { return std::sqrt(1.0 / (8.0 * std::sqrt(n))); }

// Phi^-1(p) for p in (0, 0.5]: Acklam's rational approximation refined by one
// Halley step on erfc (relative error near machine precision).
double lower_normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  for (int i = 0; i < 2; ++i) {
    const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
    const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
    x = x - u / (1 + x * u / 2);
  }
  return x;
}

// Upper-tail quantile: Phi^-1(1 - tail) without cancellation for tiny tails.
double upper_normal_quantile(double tail) { return -lower_normal_quantile(tail); }

// xoshiro256** seeded by splitmix64: fast and reproducible per sample.
struct Rng {
  std::uint64_t s[4];
  explicit Rng(std::uint64_t seed) {
    for (auto& v : s) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      v = z ^ (z >> 31);
    }
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return r;
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
};

// Fills `sq` with squared N(0,1) samples (Box-Muller pairs).
void fill_chi2(Rng& rng, std::vector<double>& sq) {
  for (std::size_t i = 0; i < sq.size(); i += 2) {
    const double r2 = -2.0 * std::log(rng.uniform());
    const double a = 2 * M_PI * rng.uniform();
    const double c = std::cos(a);
    sq[i] = r2 * c * c;
    if (i + 1 < sq.size()) sq[i + 1] = r2 - sq[i];
  }
}

// Summed-area table with a zero first row and column: (w+1) x (h+1).
void integral_image(const std::vector<double>& v, std::int64_t w, std::int64_t h, std::vector<double>& sat) {
  sat.assign(static_cast<std::size_t>((w + 1) * (h + 1)), 0.0);
  for (std::int64_t y = 0; y < h; ++y) {
    double row = 0;
    for (std::int64_t x = 0; x < w; ++x) {
      row += v[y * w + x];
      sat[(y + 1) * (w + 1) + x + 1] = sat[y * (w + 1) + x + 1] + row;
    }
  }
}

double box_sum(const std::vector<double>& sat, std::int64_t w, std::int64_t x, std::int64_t y, int e) {
  const std::int64_t W = w + 1;
  return sat[(y + e) * W + x + e] - sat[y * W + x + e] - sat[(y + e) * W + x] + sat[y * W + x];
}

// Largest box sum of every edge over the family.
std::vector<double> max_box_sums(const std::vector<double>& sat, const SetFamily& f, const std::vector<int>& edges) {
  std::vector<double> out(edges.size(), 0.0);
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const int e = edges[k];
    double m = 0;
    if (f.kind == Projection::exact) {
      for (std::int64_t y = 0; y + e <= f.height; ++y)
        for (std::int64_t x = 0; x + e <= f.width; ++x) m = std::max(m, box_sum(sat, f.width, x, y, e));
    } else {
      f.for_each_square(e, [&](std::int64_t x, std::int64_t y) { m = std::max(m, box_sum(sat, f.width, x, y, e)); });
    }
    out[k] = m;
  }
  return out;
}

std::filesystem::path cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "nanoscopy";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "nanoscopy";
  return {};
}

std::string cache_key(const SetFamily& f, const WeightOptions& o) {
  std::ostringstream k;
  k << "smre-weights-" << to_string(f.kind) << (f.kind == Projection::exact ? "-d" + std::to_string(f.mr_depth) : "")
    << "-" << f.width << "x" << f.height << "-a" << o.coverage << "-n" << o.samples << "-s" << o.seed << ".json";
  return k.str();
}

double monte_carlo_quantile(const SetFamily& f, const WeightOptions& o, const std::vector<int>& edges) {
  const std::int64_t n = f.width * f.height;
  std::vector<double> stats(static_cast<std::size_t>(o.samples));
  Progress progress("smre weights (Monte Carlo)", o.samples, o.quiet);
  std::int64_t done = 0;
#pragma omp parallel
  {
    std::vector<double> sq(static_cast<std::size_t>(n)), sat;
#pragma omp for schedule(dynamic)
    for (int i = 0; i < o.samples; ++i) {
      Rng rng(o.seed * 1000003ULL + static_cast<std::uint64_t>(i));
      fill_chi2(rng, sq);
      integral_image(sq, f.width, f.height, sat);
      const auto m = max_box_sums(sat, f, edges);
      double best = -std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < edges.size(); ++k) {
        const double s = static_cast<double>(edges[k]) * edges[k];
        best = std::max(best, (std::pow(m[k], 0.25) - mu_s(s)) / sd_s(s));
      }
      stats[static_cast<std::size_t>(i)] = best;
#pragma omp critical
      progress.update(++done);
    }
  }
  progress.finish();
  std::sort(stats.begin(), stats.end());
  // The alpha-quantile as an exact order statistic: the smallest value with at
  // least alpha of the samples at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(o.coverage * o.samples));
  return stats[std::clamp<std::size_t>(rank, 1, stats.size()) - 1];
}

}  // namespace

double normal_quantile(double p) { return p <= 0.5 ? lower_normal_quantile(p) : upper_normal_quantile(1.0 - p); }

double weight_from_quantile(double set_pixels, double q) {
  return 1.0 / std::pow(mu_s(set_pixels) + q * sd_s(set_pixels), 4.0);
}

namespace {
// Sidak per scale: q = Phi^-1((1 + alpha^(1/n))/2), n = image_pixels / set_pixels; written as
// 1 - tail with tail = (1 - alpha^(1/n))/2 to avoid cancellation.
double closed_form_quantile(double set_pixels, double image_pixels, double coverage) {
  return upper_normal_quantile(-std::expm1(std::log(coverage) / (image_pixels / set_pixels)) / 2.0);
}
}  // namespace

double closed_form_weight(double set_pixels, double image_pixels, double coverage) {
  return weight_from_quantile(set_pixels, closed_form_quantile(set_pixels, image_pixels, coverage));
}

double Weights::c_for_edge(int edge) const {
  for (std::size_t k = 0; k < edges.size(); ++k)
    if (edges[k] == edge) return c[k];
  return 0.0;
}

Weights compute_weights(const SetFamily& family, const WeightOptions& o) {
  Weights w;
  w.edges = family.edges();
  w.method = o.method;
  w.coverage = o.coverage;
  const double pixels = static_cast<double>(family.width * family.height);
  if (o.method == WeightMethod::closed_form) {
    for (int e : w.edges) {
      const double s = static_cast<double>(e) * e;
      w.q.push_back(closed_form_quantile(s, pixels, o.coverage));
      w.c.push_back(weight_from_quantile(s, w.q.back()));
    }
    return w;
  }
  w.samples = o.samples;
  double q = std::numeric_limits<double>::quiet_NaN();
  std::filesystem::path cached;
  if (o.use_cache && !cache_dir().empty()) {
    cached = cache_dir() / cache_key(family, o);
    std::ifstream in(cached);
    if (in) {
      try {
        q = nlohmann::json::parse(in).at("quantile").get<double>();
        w.from_cache = true;
      } catch (...) {
        q = std::numeric_limits<double>::quiet_NaN();  // a damaged cache entry is recomputed
      }
    }
  }
  if (!std::isfinite(q)) {
    q = monte_carlo_quantile(family, o, w.edges);
    if (!cached.empty()) {
      try {
        std::filesystem::create_directories(cached.parent_path());
        nlohmann::json j{{"family", family.describe()}, {"width", family.width}, {"height", family.height},
                         {"coverage", o.coverage}, {"samples", o.samples},     {"seed", o.seed},
                         {"quantile", q}};
        write_file_atomically(cached, j.dump(2) + "\n", AtomicOutput::Scope::standalone);  // shared by concurrent runs
      } catch (...) {
        // The cache is an optimisation: an unwritable cache directory costs time, not the run.
      }
    }
  }
  for (int e : w.edges) {
    w.c.push_back(weight_from_quantile(static_cast<double>(e) * e, q));
    w.q.push_back(q);
  }
  return w;
}

double max_constraint_ratio(std::span<const float> eps, const SetFamily& family, const Weights& w, double sigma) {
  std::vector<double> sq(eps.size()), sat;
  for (std::size_t i = 0; i < eps.size(); ++i) sq[i] = static_cast<double>(eps[i]) * eps[i];
  integral_image(sq, family.width, family.height, sat);
  const auto m = max_box_sums(sat, family, w.edges);
  double best = 0;
  for (std::size_t k = 0; k < w.edges.size(); ++k) best = std::max(best, w.c[k] * m[k] / (sigma * sigma));
  return best;
}

}  // namespace nanoscopy
