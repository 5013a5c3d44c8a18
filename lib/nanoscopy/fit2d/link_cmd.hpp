// fit2d link: merges the localizations of one blink (loc/link.hpp) in a file
// (ours, Picasso's or ThunderSTORM's) and writes them with Picasso's len and n
// fields (ThunderSTORM's detections column). The input's camera and .yaml documents, its
// fields (no field it did not have, but len and n) and its extra columns come through
// (loc_formats.hpp, CarriedMetadata): see link_extra_columns for what an extra column becomes.
#pragma once

#include <iosfwd>
#include <cstdint>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/link.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

struct Fit2dLinkOptions {
  std::string input;
  std::string output;
  std::string format;
  double pixel_size_nm = 0;
};

// The Link section of fit2d's parameters (fit2d link --radius, --max-dark; fit2d --link-radius,
// --link-max-dark; a parameter file) for localizations of `pixel_size_nm`. UsageError naming the
// parameter's source for a radius that is none of the three forms.
LinkSettings link_step_settings(const Params& p, double pixel_size_nm);

// Links `locs` (link_localizations); with Picasso's `group` column (picked or clustered
// localizations), within each group only, as Picasso's link does: a link never joins two groups.
// The links of all groups come out ordered by first frame; group_of[i] is localization i's link.
std::vector<Localization> link_by_group(const std::vector<Localization>& locs, const ExtraColumn* group,
                                        const LinkSettings& settings, std::vector<std::int64_t>& group_of);

// The input's extra columns (Picasso's group, log_likelihood, *_unc, ellipticity, d_zcalib, a
// user's own) for the `groups` links: each link's value is the mean over its localizations, in
// the column's dtype (integer columns rounded to nearest; a group id, the same in every member,
// stays itself).
void link_extra_columns(CarriedMetadata& carried, const std::vector<std::int64_t>& group_of, std::size_t groups);

// Reads `input`, links it with ctx.params' Link section and writes OUTPUT; prints the groups made.
// InputError for an unreadable input.
void run_fit2d_link(const Fit2dLinkOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
