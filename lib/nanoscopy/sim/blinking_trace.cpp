// The blinking of one emitter in continuous time: duration laws and the
// frame-by-frame overlap of on intervals (declared in blinking.hpp).
#include <algorithm>
#include <cmath>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/sim/blinking.hpp"

namespace nanoscopy {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

bool near_one(double mu) { return std::abs(1.0 - mu) < 1e-9; }

// Inverse CDF of the equilibrium (residual-life) law of the capped Pareto: the
// time to the next switch seen from a random instant of a stationary process.
// Its CDF is ∫₀ˣ P(τ > s) ds / ⟨τ⟩.
double residual_pareto(double t_min, double mu, double cap, double v) {
  if (cap <= t_min) return cap * v;
  const double target = v * capped_pareto_mean(t_min, mu, cap);
  if (target <= t_min) return target;
  double x;
  if (near_one(mu)) {
    x = t_min * std::exp((target - t_min) / t_min);
  } else {
    const double base = std::pow(t_min, 1.0 - mu) + (target - t_min) * (1.0 - mu) / std::pow(t_min, mu);
    x = base > 0 ? std::pow(base, 1.0 / (1.0 - mu)) : cap;
  }
  return std::min(x, cap);
}

}  // namespace

double pareto_duration(double t_min, double mu, double cap, double v) {
  return std::min(cap, t_min * std::pow(v, -1.0 / mu));
}

double capped_pareto_mean(double t_min, double mu, double cap) {
  if (cap <= t_min) return cap;
  if (near_one(mu)) return t_min + t_min * std::log(cap / t_min);
  return t_min + std::pow(t_min, mu) * (std::pow(cap, 1.0 - mu) - std::pow(t_min, 1.0 - mu)) / (1.0 - mu);
}

double stationary_on_fraction(const BlinkingSettings& s) {
  double on, off;
  if (s.blinking == "exponential") {
    on = s.mean_on_frames;
    off = s.mean_off_frames;
  } else {
    on = capped_pareto_mean(s.power_law_min_frames, s.alpha_on, s.power_law_max_frames);
    off = capped_pareto_mean(s.power_law_min_frames, s.alpha_off, s.power_law_max_frames);
  }
  return on / (on + off);
}

BlinkingTrace::BlinkingTrace(const BlinkingSettings& s, std::uint64_t emitter_id)
    : state_(s.seed * 0xD1B54A32D192ED03ULL ^ (emitter_id + 1) * 0x9E3779B97F4A7C15ULL),
      exponential_(s.blinking == "exponential"),
      mean_on_(s.mean_on_frames),
      mean_off_(s.mean_off_frames),
      mu_on_(s.alpha_on),
      mu_off_(s.alpha_off),
      t_min_(s.power_law_min_frames),
      cap_(s.power_law_max_frames) {
  if (!exponential_ && s.blinking != "power-law")
    throw UsageError("--blinking", "unknown blinking law '" + s.blinking + "' (exponential or power-law)");
  splitmix64(state_);  // decorrelate neighbouring ids before the first draw
  on_ = uniform() <= stationary_on_fraction(s);
  switch_time_ = draw(on_, true);
  // Bleaching: a budget of on-time, the shorter of the two exponential limits.
  if (s.bleach_frames > 0) budget_ = std::min(budget_, -s.bleach_frames * std::log(uniform()));
  if (s.photon_budget > 0) budget_ = std::min(budget_, -s.photon_budget / s.brightness * std::log(uniform()));
}

double BlinkingTrace::uniform() {
  // 53 random bits → (0, 1]; never 0, so logs and negative powers are finite.
  return static_cast<double>((splitmix64(state_) >> 11) + 1) * 0x1.0p-53;
}

double BlinkingTrace::draw(bool on_state, bool first) {
  const double v = uniform();
  if (exponential_) return -(on_state ? mean_on_ : mean_off_) * std::log(v);  // memoryless: first = any
  const double mu = on_state ? mu_on_ : mu_off_;
  return first ? residual_pareto(t_min_, mu, cap_, v) : pareto_duration(t_min_, mu, cap_, v);
}

double BlinkingTrace::next_frame() {
  const double start = static_cast<double>(frame_), end = start + 1.0;
  double on_time = 0;
  if (bleach_frame_ < 0) {
    double pos = start;
    while (true) {
      const double seg_end = std::min(switch_time_, end);
      if (on_) {
        const double dt = seg_end - pos;
        if (dt >= budget_) {  // bleaches during this on interval
          on_time += budget_;
          budget_ = 0;
          bleach_frame_ = frame_;
          break;
        }
        budget_ -= dt;
        on_time += dt;
      }
      if (switch_time_ > end) break;
      pos = switch_time_;
      on_ = !on_;
      switch_time_ += draw(on_, false);
      if (pos >= end) break;
    }
  }
  ++frame_;
  on_time = std::clamp(on_time, 0.0, 1.0);
  total_on_ += on_time;
  return on_time;
}

}  // namespace nanoscopy
