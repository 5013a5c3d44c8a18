// bench postprocess's link table: fit2d link's candidate radii and max dark
// frames scored against the true blinks of simulated structures (rings, lines;
// sparse and dense), to choose Link/radius and Link/max dark from the data.
//
// Scoring (the simulator knows each localization's blink, i.e. its emitter's
// on-period): a true blink is split when its localizations land in more than
// one group; a group is merged when it holds localizations of more than one
// true blink. split rate = split blinks / true blinks; merge rate = merged
// groups / groups. (A group count alone can hide both: splits and merges
// balance.) Two blinks of one emitter one dark frame apart are two true blinks:
// max dark 1 merging them counts as a merge.
//
// What a fit adds to the simulator's Gaussian errors (sim/loc_sim.hpp), as
// fit2d's localizations of simulated movies show it: 5 % of the detections
// missed (a blink's frame without a localization) and overlap outliers, a
// localization pulled towards a neighbour, modelled as a further N(0, 0.3 px)
// per axis on 1 % (sparse) or 4 % (dense, issue 25's measurement on rings) of
// the localizations, their stated precision unchanged.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/sim/loc_sim.hpp"

namespace nanoscopy {

struct LinkDataSet {
  std::string structure;  // rings or lines
  double per_frame = 0;   // localizations per frame before the missed ones
  double outliers = 0;    // fraction of the localizations
  std::string name() const { return structure + (per_frame > 8 ? " dense" : " sparse"); }
};

// 1,200 emitters on the structure in 128 x 128 px of 130 nm, precision 10 nm, with the header's missed
// detections and outliers; `blink` stays each localization's true blink.
SimulatedLocalizations simulate_link_set(const LinkDataSet& set, std::int64_t frames, std::uint64_t seed);

struct LinkRates {
  std::int64_t blinks = 0, groups = 0, split = 0, merged = 0;
  double split_rate() const { return blinks > 0 ? static_cast<double>(split) / static_cast<double>(blinks) : 0.0; }
  double merge_rate() const { return groups > 0 ? static_cast<double>(merged) / static_cast<double>(groups) : 0.0; }
};

// `blink[i]`: localization i's true blink (< 0: a marker, left out); `group_of[i]`: its group.
LinkRates score_link_groups(const std::vector<std::int64_t>& blink, const std::vector<std::int64_t>& group_of);

struct LinkTableResult {
  nlohmann::json rows = nlohmann::json::array();
  bool default_passed = true;  // fit2d's default below 1 % split and merge on every data set (reported, not
                               // the run's exit status: no candidate is below it on dense rings)
  int default_below = 0;       // the data sets where it is
};

// The structures' data sets (quick: fewer frames), every candidate scored; prints the Markdown table.
// `default_radius`, `default_dark`: fit2d's defaults, marked in the table and checked.
LinkTableResult run_link_table(bool quick, std::uint64_t seed, const std::string& default_radius, int default_dark,
                               bool quiet, std::ostream& out);

}  // namespace nanoscopy
