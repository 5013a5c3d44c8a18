#include "nanoscopy/core/astigmatism.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/json_nesting.hpp"
#include "nanoscopy/core/run_files.hpp"

namespace nanoscopy {
namespace {

constexpr const char* kFormatName = "nanoscopy astigmatic calibration";
constexpr const char* kModelName = "defocus-polynomial";

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string where_of(const AstigmaticCalibration& c) { return c.source.empty() ? "astigmatic calibration" : c.source; }

// nlohmann's messages start with "[json.exception.parse_error.101] ": keep the rest.
std::string json_message(const std::exception& e) {
  std::string m = e.what();
  if (!m.empty() && m.front() == '[') {
    const auto close = m.find("] ");
    if (close != std::string::npos) m = m.substr(close + 2);
  }
  std::replace(m.begin(), m.end(), '\n', ' ');
  return clip_text(m, 300);  // nlohmann quotes the last token read, which may be megabytes long
}

double number_at(const nlohmann::json& obj, const std::string& key, const std::string& name, const std::string& path,
                 std::optional<double> fallback = std::nullopt) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (fallback) return *fallback;
    throw InputError(path, "the key \"" + name + "\" is missing");
  }
  if (!it->is_number()) throw InputError(path, "\"" + name + "\" must be a number, not " + clip_text(it->dump()));
  const double v = it->get<double>();
  if (!std::isfinite(v)) throw InputError(path, "\"" + name + "\" must be a finite number");
  return v;
}

DefocusCurve<double> curve_at(const nlohmann::json& root, const std::string& axis, const std::string& path) {
  const auto it = root.find(axis);
  if (it == root.end()) throw InputError(path, "the key \"" + axis + "\" (that axis's defocus curve) is missing");
  if (!it->is_object())
    throw InputError(path, "\"" + axis + "\" must be an object {\"sigma0\", \"c\", \"d\", \"A\", \"B\"}");
  DefocusCurve<double> k;
  k.sigma0 = number_at(*it, "sigma0", axis + ".sigma0", path);
  k.c = number_at(*it, "c", axis + ".c", path);
  k.d = number_at(*it, "d", axis + ".d", path);
  k.a = number_at(*it, "A", axis + ".A", path, 0.0);
  k.b = number_at(*it, "B", axis + ".B", path, 0.0);
  return k;
}

nlohmann::ordered_json curve_json(const DefocusCurve<double>& k) {
  return {{"sigma0", k.sigma0}, {"c", k.c}, {"d", k.d}, {"A", k.a}, {"B", k.b}};
}

// ---------------------------------------------------------------- the fit

struct Sample {
  double z, s;
};

// Solves the n×n system a·x = rhs (row-major, n ≤ 5) by Gaussian elimination
// with partial pivoting; false when singular.
bool solve(std::array<double, 25> a, std::array<double, 5> rhs, int n, std::array<double, 5>& x) {
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r)
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    if (!(std::abs(a[pivot * n + col]) > 0)) return false;
    if (pivot != col) {
      for (int k = 0; k < n; ++k) std::swap(a[col * n + k], a[pivot * n + k]);
      std::swap(rhs[col], rhs[pivot]);
    }
    for (int r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / a[col * n + col];
      for (int k = col; k < n; ++k) a[r * n + k] -= f * a[col * n + k];
      rhs[r] -= f * rhs[col];
    }
  }
  for (int r = n - 1; r >= 0; --r) {
    double v = rhs[r];
    for (int k = r + 1; k < n; ++k) v -= a[r * n + k] * x[k];
    x[r] = v / a[r * n + r];
  }
  return std::all_of(x.begin(), x.begin() + n, [](double v) { return std::isfinite(v); });
}

// Parameters (σ0, c, d, A, B) ↔ curve.
DefocusCurve<double> to_curve(const std::array<double, 5>& p) { return {p[0], p[1], p[2], p[3], p[4]}; }

double cost(const std::vector<Sample>& samples, const std::array<double, 5>& p) {
  const auto k = to_curve(p);
  double c = 0;
  for (const auto& s : samples) {
    const double r = k.sigma(s.z) - s.s;
    c += r * r;
  }
  return std::isfinite(c) ? c : std::numeric_limits<double>::infinity();
}

// Levenberg–Marquardt over the first n parameters (3: σ0, c, d; 5: with A, B).
int levenberg_marquardt(const std::vector<Sample>& samples, std::array<double, 5>& p, int n) {
  double lambda = 1e-3;
  double current = cost(samples, p);
  int iteration = 0;
  for (; iteration < 500; ++iteration) {
    std::array<double, 25> jtj{};
    std::array<double, 5> jtr{};
    for (const auto& s : samples) {
      const double u = (s.z - p[1]) / p[2];
      const double q = std::max(1.0 + u * u * (1.0 + u * (p[3] + u * p[4])), 1e-6);
      const double r = std::sqrt(q);
      const double residual = p[0] * r - s.s;
      const double ds_du = p[0] * u * (2.0 + u * (3.0 * p[3] + 4.0 * p[4] * u)) / (2.0 * r);
      const std::array<double, 5> j = {r, -ds_du / p[2], -ds_du * u / p[2], p[0] * u * u * u / (2.0 * r),
                                       p[0] * u * u * u * u / (2.0 * r)};
      for (int a = 0; a < n; ++a) {
        jtr[a] += j[a] * residual;
        for (int b = 0; b < n; ++b) jtj[a * n + b] += j[a] * j[b];
      }
    }
    bool improved = false;
    while (lambda < 1e12) {
      auto damped = jtj;
      for (int a = 0; a < n; ++a) damped[a * n + a] += lambda * std::max(jtj[a * n + a], 1e-300);
      std::array<double, 5> neg{}, step{};
      for (int a = 0; a < n; ++a) neg[a] = -jtr[a];
      if (solve(damped, neg, n, step)) {
        auto trial = p;
        for (int a = 0; a < n; ++a) trial[a] += step[a];
        const double c = (trial[0] > 0 && trial[2] != 0) ? cost(samples, trial) : std::numeric_limits<double>::infinity();
        if (c < current) {
          const double decrease = current - c;
          p = trial;
          current = c;
          lambda = std::max(lambda / 10, 1e-12);
          improved = true;
          if (decrease <= 1e-14 * current + 1e-300) return iteration + 1;
          break;
        }
      }
      lambda *= 10;
    }
    if (!improved) break;  // no step lowers the cost: at the minimum
  }
  return iteration;
}

std::array<double, 5> initial_guess(const std::vector<Sample>& samples) {
  // σ² = σ0² (1 + ((z − c)/d)²) is a parabola in z: fit a0 + a1 t + a2 t² with
  // t = (z − z̄)/scale by linear least squares.
  double zmin = samples.front().z, zmax = zmin, zsum = 0;
  for (const auto& s : samples) {
    zmin = std::min(zmin, s.z);
    zmax = std::max(zmax, s.z);
    zsum += s.z;
  }
  const double zmean = zsum / static_cast<double>(samples.size());
  const double scale = std::max((zmax - zmin) / 2, 1e-9);
  std::array<double, 25> m{};
  std::array<double, 5> rhs{}, a{};
  for (const auto& s : samples) {
    const double t = (s.z - zmean) / scale;
    const std::array<double, 3> basis = {1.0, t, t * t};
    for (int i = 0; i < 3; ++i) {
      rhs[i] += basis[i] * s.s * s.s;
      for (int j = 0; j < 3; ++j) m[i * 3 + j] += basis[i] * basis[j];
    }
  }
  if (solve(m, rhs, 3, a) && a[2] > 0) {
    const double t0 = -a[1] / (2 * a[2]);
    const double s02 = a[0] - a[1] * a[1] / (4 * a[2]);
    if (s02 > 0 && std::abs(t0) < 10) {
      const double sigma0 = std::sqrt(s02);
      return {sigma0, zmean + t0 * scale, std::sqrt(s02 / a[2]) * scale, 0, 0};
    }
  }
  // Else: the narrowest sample is the focus; d a quarter of the range.
  const auto narrowest = std::min_element(samples.begin(), samples.end(), [](const Sample& l, const Sample& r) { return l.s < r.s; });
  return {narrowest->s, narrowest->z, std::max((zmax - zmin) / 4, 1e-9), 0, 0};
}

}  // namespace

void AstigmaticCalibration::require_covers(double z_min, double z_max, const std::string& where) const {
  if (!covers(z_min, z_max))
    throw UsageError(where, "z from " + number_text(z_min) + " to " + number_text(z_max) + " nm is outside the range " +
                                number_text(z_min_nm) + " to " + number_text(z_max_nm) + " nm that " + where_of(*this) +
                                " is calibrated for");
}

void AstigmaticCalibration::validate() const {
  const std::string where = where_of(*this);
  if (!(pixel_size_nm > 0) || !std::isfinite(pixel_size_nm))
    throw InputError(where, "the pixel size must be a positive number of nm, not " + number_text(pixel_size_nm));
  if (!std::isfinite(z_min_nm) || !std::isfinite(z_max_nm) || !(z_min_nm < z_max_nm))
    throw InputError(where, "the z range must be two finite numbers, low to high (nm), not [" + number_text(z_min_nm) +
                                ", " + number_text(z_max_nm) + "]");
  const std::array<std::pair<const char*, const DefocusCurve<double>*>, 2> axes = {{{"x", &x}, {"y", &y}}};
  for (const auto& [name, curve] : axes) {
    const std::string n = name;
    const auto& k = *curve;
    for (const double v : {k.sigma0, k.c, k.d, k.a, k.b})
      if (!std::isfinite(v)) throw InputError(where, n + ": every parameter must be a finite number");
    if (!(k.sigma0 > 0)) throw InputError(where, n + ".sigma0 must be positive (nm), not " + number_text(k.sigma0));
    if (k.d == 0) throw InputError(where, n + ".d (the depth of focus) must not be 0");
    for (int i = 0; i <= 200; ++i) {
      const double z = z_min_nm + (z_max_nm - z_min_nm) * i / 200.0;
      const double u = (z - k.c) / k.d;
      if (!(1.0 + u * u * (1.0 + u * (k.a + u * k.b)) > 1e-6))
        throw InputError(where, "sigma_" + n + "(z) is not defined at z = " + number_text(z) +
                                    " nm: 1 + u^2 + A u^3 + B u^4 <= 0 inside the z range");
    }
  }
}

AstigmaticCalibration default_astigmatic_calibration(double pixel_size_nm) {
  AstigmaticCalibration c;
  c.pixel_size_nm = pixel_size_nm;
  c.x = {130.0, -250.0, 400.0, 0.0, 0.0};
  c.y = {130.0, 250.0, 400.0, 0.0, 0.0};
  c.z_min_nm = -600;
  c.z_max_nm = 600;
  return c;
}

std::string to_json(const AstigmaticCalibration& c) {
  nlohmann::ordered_json j;
  j["format"] = kFormatName;
  j["version"] = kAstigmaticCalibrationVersion;
  j["model"] = kModelName;
  j["formula"] = "sigma(z) = sigma0 * sqrt(1 + u^2 + A u^3 + B u^4), u = (z - c) / d";
  j["units"] = "nm";
  j["pixel_size_nm"] = c.pixel_size_nm;
  j["z_range_nm"] = {c.z_min_nm, c.z_max_nm};
  j["x"] = curve_json(c.x);
  j["y"] = curve_json(c.y);
  return j.dump(2) + "\n";
}

std::string calibration_pixel_size_warning(const AstigmaticCalibration& c, double pixel_size_nm) {
  if (!(pixel_size_nm > 0) || !(c.pixel_size_nm > 0)) return {};
  if (std::abs(c.pixel_size_nm - pixel_size_nm) <= 0.01 * pixel_size_nm) return {};
  return (c.source.empty() ? std::string("the calibration") : c.source) + ": made at a pixel size of " +
         number_text(c.pixel_size_nm) + " nm, but the movie's is " + number_text(pixel_size_nm) +
         " nm: its widths (nm) may belong to other optics or a wrong pixel size (calibrate at the movie's pixel size)";
}

void write_astigmatic_calibration(const std::string& path, const AstigmaticCalibration& c) {
  write_file_atomically(path, to_json(c));
}

// The deepest nesting a calibration file may have (its own is 2).
constexpr std::size_t kMaxCalibrationDepth = 16;

AstigmaticCalibration read_astigmatic_calibration(const std::string& path) {
  plan_input(path, "the calibration");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the calibration file");
  std::stringstream text;
  text << in.rdbuf();
  // A calibration nests two levels; a value nested thousands deep would overflow the stack when quoted (dump).
  if (const std::size_t depth = json_nesting_depth(text.str()); depth > kMaxCalibrationDepth)
    throw InputError(path, "not a valid JSON calibration: values nested " + std::to_string(depth) + " deep (at most " +
                               std::to_string(kMaxCalibrationDepth) + ")");
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, "not a valid JSON calibration: " + json_message(e));
  }
  if (!root.is_object()) throw InputError(path, "a calibration must be a JSON object");
  if (const auto it = root.find("format"); it != root.end() && *it != kFormatName)
    throw InputError(path, "unknown format " + clip_text(it->dump()) + " (expected \"" + kFormatName + "\")");
  // The version this build reads; a file without one is read as version 1 (hand-written files).
  if (const auto it = root.find("version");
      it != root.end() && !(it->is_number_integer() && it->get<std::int64_t>() == kAstigmaticCalibrationVersion))
    throw InputError(path, "calibration format version " + clip_text(it->dump()) + " is not supported (this build reads version " +
                               std::to_string(kAstigmaticCalibrationVersion) + ")");
  if (const auto it = root.find("model"); it != root.end() && *it != kModelName)
    throw InputError(path, "unknown model " + clip_text(it->dump()) + " (expected \"" + kModelName + "\")");
  if (const auto it = root.find("units"); it != root.end() && *it != "nm")
    throw InputError(path, "unknown units " + clip_text(it->dump()) + " (expected \"nm\")");
  AstigmaticCalibration c;
  c.source = path;
  c.pixel_size_nm = number_at(root, "pixel_size_nm", "pixel_size_nm", path);
  const auto range = root.find("z_range_nm");
  if (range == root.end()) throw InputError(path, "the key \"z_range_nm\" ([low, high] in nm) is missing");
  if (!range->is_array() || range->size() != 2 || !(*range)[0].is_number() || !(*range)[1].is_number())
    throw InputError(path, "\"z_range_nm\" must be two numbers [low, high] in nm, not " + clip_text(range->dump()));
  c.z_min_nm = (*range)[0].get<double>();
  c.z_max_nm = (*range)[1].get<double>();
  c.x = curve_at(root, "x", path);
  c.y = curve_at(root, "y", path);
  c.validate();
  return c;
}

DefocusFit fit_defocus_curve(std::span<const double> z, std::span<const double> sigma, bool higher_order,
                             const std::string& where) {
  if (z.size() != sigma.size())
    throw InputError(where, "the defocus fit needs as many widths as z values (" + std::to_string(sigma.size()) + " vs " +
                                std::to_string(z.size()) + ")");
  std::vector<Sample> samples;
  for (std::size_t k = 0; k < z.size(); ++k)
    if (std::isfinite(z[k]) && std::isfinite(sigma[k]) && sigma[k] > 0) samples.push_back({z[k], sigma[k]});
  const int n = higher_order ? 5 : 3;
  if (static_cast<int>(samples.size()) < n + 1)
    throw InputError(where, "the defocus fit needs at least " + std::to_string(n + 1) + " usable (z, sigma) samples, got " +
                                std::to_string(samples.size()));
  auto p = initial_guess(samples);
  DefocusFit fit;
  fit.iterations = levenberg_marquardt(samples, p, 3);
  if (higher_order) fit.iterations += levenberg_marquardt(samples, p, 5);
  if (p[2] < 0) {  // u → −u: the same curve with d > 0
    p[2] = -p[2];
    p[3] = -p[3];
  }
  fit.curve = to_curve(p);
  fit.rms = std::sqrt(cost(samples, p) / static_cast<double>(samples.size()));
  if (!std::isfinite(fit.rms) || !(p[0] > 0) || !std::all_of(p.begin(), p.end(), [](double v) { return std::isfinite(v); }))
    throw InputError(where, "the defocus fit did not converge");
  return fit;
}

AstigmaticCalibration fit_astigmatic_calibration(std::span<const double> z, std::span<const double> sigma_x,
                                                 std::span<const double> sigma_y, double pixel_size_nm, bool higher_order,
                                                 const std::string& where) {
  AstigmaticCalibration c;
  c.pixel_size_nm = pixel_size_nm;
  c.x = fit_defocus_curve(z, sigma_x, higher_order, where + " (sigma_x)").curve;
  c.y = fit_defocus_curve(z, sigma_y, higher_order, where + " (sigma_y)").curve;
  c.z_min_nm = std::numeric_limits<double>::infinity();
  c.z_max_nm = -std::numeric_limits<double>::infinity();
  for (const double v : z)
    if (std::isfinite(v)) {
      c.z_min_nm = std::min(c.z_min_nm, v);
      c.z_max_nm = std::max(c.z_max_nm, v);
    }
  c.source = where;
  c.validate();
  c.source.clear();
  return c;
}

}  // namespace nanoscopy
