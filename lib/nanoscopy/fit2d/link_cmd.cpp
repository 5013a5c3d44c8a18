#include "nanoscopy/fit2d/link_cmd.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <vector>
#include <stdexcept>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {
namespace {

// "30nm" → 30 / pixel size px; "0.3px" → 0.3; "3x" → −3 (times the precision, LinkSettings).
double radius_px(const std::string& text, double pixel_size_nm, const std::string& where) {
  const auto value = [&](std::size_t suffix) {
    try {
      std::size_t used = 0;
      const std::string number = text.substr(0, text.size() - suffix);
      const double v = std::stod(number, &used);
      if (used == number.size() && v > 0) return v;
    } catch (const std::exception&) {
    }
    throw UsageError(where, "'" + text + "' is not a positive distance: 30nm, 0.3px or 3x (times the precision)");
  };
  if (text.size() > 2 && text.ends_with("nm")) return value(2) / pixel_size_nm;
  if (text.size() > 2 && text.ends_with("px")) return value(2);
  if (text.size() > 1 && text.ends_with("x")) return -value(1);
  throw UsageError(where, "'" + text + "' is not a positive distance: 30nm, 0.3px or 3x (times the precision)");
}

}  // namespace

std::vector<Localization> link_by_group(const std::vector<Localization>& locs, const ExtraColumn* group,
                                        const LinkSettings& settings, std::vector<std::int64_t>& group_of) {
  if (!group) return link_localizations(locs, settings, &group_of);
  // Picasso's picked or clustered groups: each linked on its own, then the links of every group in order of
  // their first frame (ties: the group's order of first appearance).
  std::vector<double> ids;
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < locs.size(); ++i) {
    const double id = group->values[i];
    auto at = std::find(ids.begin(), ids.end(), id);
    if (at == ids.end()) {
      ids.push_back(id);
      members.emplace_back();
      at = ids.end() - 1;
    }
    members[static_cast<std::size_t>(at - ids.begin())].push_back(i);
  }
  struct Linked {
    Localization loc;
    std::size_t set = 0, index = 0;
  };
  std::vector<Linked> all;
  std::vector<std::vector<std::int64_t>> local(members.size());
  for (std::size_t s = 0; s < members.size(); ++s) {
    std::vector<Localization> subset;
    subset.reserve(members[s].size());
    for (std::size_t i : members[s]) subset.push_back(locs[i]);
    const auto linked = link_localizations(subset, settings, &local[s]);
    for (std::size_t k = 0; k < linked.size(); ++k) all.push_back({linked[k], s, k});
  }
  std::stable_sort(all.begin(), all.end(), [](const Linked& a, const Linked& b) { return a.loc.frame < b.loc.frame; });
  std::vector<std::vector<std::int64_t>> position(members.size());
  for (std::size_t s = 0; s < members.size(); ++s) position[s].resize(local[s].empty() ? 0 : *std::max_element(local[s].begin(), local[s].end()) + 1);
  std::vector<Localization> out;
  out.reserve(all.size());
  for (std::size_t k = 0; k < all.size(); ++k) {
    position[all[k].set][all[k].index] = static_cast<std::int64_t>(k);
    out.push_back(all[k].loc);
  }
  group_of.assign(locs.size(), -1);
  for (std::size_t s = 0; s < members.size(); ++s)
    for (std::size_t j = 0; j < members[s].size(); ++j) group_of[members[s][j]] = position[s][static_cast<std::size_t>(local[s][j])];
  return out;
}

void link_extra_columns(CarriedMetadata& carried, const std::vector<std::int64_t>& group_of, std::size_t groups) {
  for (ExtraColumn& column : carried.extra) {
    std::vector<double> sum(groups, 0.0), count(groups, 0.0);
    for (std::size_t i = 0; i < group_of.size() && i < column.values.size(); ++i) {
      const auto g = static_cast<std::size_t>(group_of[i]);
      sum[g] += column.values[i];
      count[g] += 1;
    }
    const bool integer = column.type != ColumnType::f32 && column.type != ColumnType::f64;
    for (std::size_t g = 0; g < groups; ++g) {
      sum[g] /= count[g];
      if (integer) sum[g] = std::nearbyint(sum[g]);
    }
    column.values = std::move(sum);
  }
}

LinkSettings link_step_settings(const Params& p, double pixel_size_nm) {
  LinkSettings settings;
  settings.radius_px = radius_px(p.get_string("Link/radius"), pixel_size_nm, p.source("Link/radius").describe());
  settings.max_dark = static_cast<int>(p.get_int("Link/max dark"));
  return settings;
}

void run_fit2d_link(const Fit2dLinkOptions& o, ToolContext& ctx, std::ostream& out) {
  plan_localization_input(o.input);
  plan_localization_output(o.output, o.format, "the linked localizations");
  check_run_plan();
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  LocalizationFile file = read_localization_file(o.input, read);
  if (!(file.pixel_size_nm > 0)) throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  const LinkSettings settings = link_step_settings(ctx.params, file.pixel_size_nm);
  const std::string radius = ctx.params.get_string("Link/radius");
  const std::size_t before = file.locs.size();
  std::vector<std::int64_t> group_of;
  file.locs = link_by_group(file.locs, file.carried.extra_column("group"), settings, group_of);
  link_extra_columns(file.carried, group_of, file.locs.size());
  LocWriterContext context = writer_context(file, "nanoscopy fit2d link");
  context.linked = true;
  context.parameters = {
      {"Input file", o.input}, {"Link radius", radius}, {"Link max dark", std::to_string(settings.max_dark)}};
  const LocWriteCounts counts = write_localizations(o.output, o.format, context, file.locs);
  out << "fit2d link: " << o.input << ": " << before << " localizations in " << file.locs.size()
      << " groups (radius " << radius << ", max dark " << settings.max_dark << " frames); wrote " << counts.written
      << " to " << o.output;
  if (counts.dropped() > 0) out << " (" << counts.dropped() << " dropped by the format's rules)";
  out << "\n";
}

}  // namespace nanoscopy
