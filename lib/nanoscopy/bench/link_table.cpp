#include "nanoscopy/bench/link_table.hpp"

#include <cstdio>
#include <iostream>
#include <random>
#include <unordered_map>

#include "nanoscopy/fit2d/link_cmd.hpp"
#include "nanoscopy/loc/link.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/sim/loc_sim.hpp"

namespace nanoscopy {
namespace {

constexpr double kPixelNm = 130;
constexpr std::int64_t kField = 128;
constexpr int kEmitters = 1200;
constexpr double kMissed = 0.05;         // detections missed
constexpr double kOutlierPx = 0.3;       // an overlap outlier's further displacement, px per axis

struct Candidate {
  std::string radius;
  int dark = 1;
};

}  // namespace

SimulatedLocalizations simulate_link_set(const LinkDataSet& d, std::int64_t frames, std::uint64_t seed) {
  LocSimSettings sim;
  sim.frames = frames;
  sim.width = sim.height = kField;
  sim.pixel_size_nm = kPixelNm;
  sim.structure.structure = d.structure;
  sim.emitters = kEmitters;
  sim.on_fraction = d.per_frame / kEmitters;
  sim.seed = seed;
  SimulatedLocalizations s = simulate_localizations(sim);
  std::mt19937_64 rng(seed ^ 0x6c696e6bULL);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, kOutlierPx);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < s.locs.size(); ++i) {
    if (u(rng) < kMissed) continue;
    Localization l = s.locs[i];
    if (u(rng) < d.outliers) {
      l.x += g(rng);
      l.y += g(rng);
    }
    s.locs[kept] = l;
    s.blink[kept] = s.blink[i];
    ++kept;
  }
  s.locs.resize(kept);
  s.blink.resize(kept);
  return s;
}

LinkRates score_link_groups(const std::vector<std::int64_t>& blink, const std::vector<std::int64_t>& group_of) {
  std::unordered_map<std::int64_t, std::int64_t> group_of_blink, blink_of_group;  // −2: more than one
  for (std::size_t i = 0; i < blink.size(); ++i) {
    if (blink[i] < 0) continue;
    const auto [g, fresh_g] = group_of_blink.try_emplace(blink[i], group_of[i]);
    if (!fresh_g && g->second != group_of[i]) g->second = -2;
    const auto [b, fresh_b] = blink_of_group.try_emplace(group_of[i], blink[i]);
    if (!fresh_b && b->second != blink[i]) b->second = -2;
  }
  LinkRates r;
  r.blinks = static_cast<std::int64_t>(group_of_blink.size());
  r.groups = static_cast<std::int64_t>(blink_of_group.size());
  for (const auto& [b, g] : group_of_blink) r.split += g == -2 ? 1 : 0;
  for (const auto& [g, b] : blink_of_group) r.merged += b == -2 ? 1 : 0;
  return r;
}

LinkTableResult run_link_table(bool quick, std::uint64_t seed, const std::string& default_radius, int default_dark,
                               bool quiet, std::ostream& out) {
  const std::int64_t frames = quick ? 2000 : 10000;
  const std::vector<LinkDataSet> sets{{"rings", 4, 0.01}, {"rings", 12, 0.04}, {"lines", 4, 0.01}, {"lines", 12, 0.04}};
  std::vector<Candidate> candidates;
  for (const char* r : {"3x", "5x", "8x", "0.5px", "0.7px", "0.75px", "0.8px", "0.9px", "1px", "1.5px"})
    for (int dark : {0, 1, 2}) candidates.push_back({r, dark});
  Params p = fit2d_schema().defaults();
  LinkTableResult result;
  std::vector<std::vector<LinkRates>> rates(candidates.size());
  std::vector<SimulatedLocalizations> data;
  for (const LinkDataSet& d : sets) {
    if (!quiet) std::cerr << "bench postprocess: link table, " << d.name() << "\n";
    data.push_back(simulate_link_set(d, frames, seed));
  }
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    p.set("Link/radius", candidates[c].radius, ParamSource{"bench", 0});
    p.set("Link/max dark", std::to_string(candidates[c].dark), ParamSource{"bench", 0});
    const LinkSettings settings = link_step_settings(p, kPixelNm);
    for (const SimulatedLocalizations& s : data) {
      std::vector<std::int64_t> group_of;
      static_cast<void>(link_localizations(s.locs, settings, &group_of));
      rates[c].push_back(score_link_groups(s.blink, group_of));
    }
  }
  out << "\n| link: split / merge (%) | max dark |";
  for (const LinkDataSet& d : sets) out << " " << d.name() << " |";
  out << " both < 1 % |\n|---|---:|";
  for (std::size_t k = 0; k < sets.size(); ++k) out << "---:|";
  out << "---|\n";
  char cell[96];
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const bool is_default = candidates[c].radius == default_radius && candidates[c].dark == default_dark;
    out << "| " << candidates[c].radius << (is_default ? " (default)" : "") << " | " << candidates[c].dark << " |";
    bool below = true;
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t k = 0; k < sets.size(); ++k) {
      const LinkRates& r = rates[c][k];
      std::snprintf(cell, sizeof cell, " %.2f / %.2f |", 100 * r.split_rate(), 100 * r.merge_rate());
      out << cell;
      below = below && r.split_rate() < 0.01 && r.merge_rate() < 0.01;
      cells.push_back({{"data", sets[k].name()},
                       {"blinks", r.blinks},
                       {"groups", r.groups},
                       {"split_rate", r.split_rate()},
                       {"merge_rate", r.merge_rate()}});
    }
    out << (below ? " yes" : " no") << " |\n";
    if (is_default) {
      result.default_passed = below;
      for (const LinkRates& r : rates[c]) result.default_below += r.split_rate() < 0.01 && r.merge_rate() < 0.01;
    }
    result.rows.push_back(
        {{"radius", candidates[c].radius}, {"max_dark", candidates[c].dark}, {"default", is_default}, {"sets", cells}});
  }
  std::snprintf(cell, sizeof cell, "%lld frames, %d emitters in %lldx%lld px of %g nm; ", static_cast<long long>(frames),
                kEmitters, static_cast<long long>(kField), static_cast<long long>(kField), kPixelNm);
  out << cell << "sparse 4, dense 12 localizations per frame; 5 % missed, outliers 1 % / 4 % (N(0, 0.3 px))\n"
      << "fit2d's default (radius " << default_radius << ", max dark " << default_dark << "): split and merge below 1 % on "
      << result.default_below << " of " << sets.size() << " data sets\n";
  return result;
}

}  // namespace nanoscopy
