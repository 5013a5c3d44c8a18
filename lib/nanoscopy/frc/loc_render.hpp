// FRC of a localization list: the localizations are split in two halves by
// random time blocks and each half is rendered as a 2D histogram.
//
// Time blocks: the frames first .. last (of the localizations) are cut into K
// blocks of consecutive frames of (nearly) equal length; a seeded random
// permutation gives K/2 blocks to half A and K/2 to half B. Blocks rather than
// single frames because one molecule blinking over a few consecutive frames
// would otherwise land in both halves and correlate them beyond the
// resolution; random rather than first/second half so that drift and
// bleaching do not separate the halves.
//
// Rendering: localization (x, y) in camera px (centre of pixel i at i,
// Localization's convention) lies at ((x + 0.5) P, (y + 0.5) P) nm from the
// camera frame's corner (P = pixel size, nm); a histogram pixel of R nm
// counts the localizations in [i R, (i + 1) R). The rendered image covers the
// camera frame (width_px x height_px camera pixels) when known, else
// [0, largest coordinate]; localizations outside it are left out.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

struct LocRenderSettings {
  double pixel_size_nm = 0;  // P: camera pixel, nm (> 0)
  double render_px_nm = 0;   // R: rendered pixel, nm (> 0)
  int time_blocks = 20;      // K: even, >= 2
  std::uint64_t seed = 1;
  std::int64_t width_px = 0, height_px = 0;  // camera frame; 0 = from the localizations
};

struct LocRenderedPair {
  std::int64_t width = 0, height = 0;            // rendered pixels
  std::vector<float> a, b;                       // histograms (row-major, counts)
  std::int64_t count_a = 0, count_b = 0;         // localizations rendered in each half
  std::int64_t first_frame = 0, last_frame = 0;  // span of the blocks (inclusive)
  std::vector<int> blocks_a;                     // block indices given to half A (sorted)
};

// The histogram of `locs` on a width x height grid of render_px_nm pixels (settings as above).
std::vector<float> render_histogram(std::span<const Localization> locs, const LocRenderSettings& settings,
                                    std::int64_t width, std::int64_t height);

// The largest rendered image side.
inline constexpr double kMaxFrcRenderSide = 16384;

// Splits and renders. UsageError: P, R <= 0, K odd or < 2, a rendered image
// above kMaxFrcRenderSide px a side; InputError (naming `source`): no localizations, fewer
// frames than blocks.
LocRenderedPair render_time_block_halves(std::span<const Localization> locs, const LocRenderSettings& settings,
                                         const std::string& source);

}  // namespace nanoscopy
