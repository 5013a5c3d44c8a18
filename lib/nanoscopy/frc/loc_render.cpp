#include "nanoscopy/frc/loc_render.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

std::vector<float> render_histogram(std::span<const Localization> locs, const LocRenderSettings& s, std::int64_t width,
                                    std::int64_t height) {
  std::vector<float> image(static_cast<std::size_t>(width * height), 0.0f);
  const double scale = s.pixel_size_nm / s.render_px_nm;  // camera px -> rendered px
  for (const Localization& l : locs) {
    const double fx = std::floor((l.x + 0.5) * scale), fy = std::floor((l.y + 0.5) * scale);
    if (!(fx >= 0 && fy >= 0 && fx < static_cast<double>(width) && fy < static_cast<double>(height))) continue;
    image[static_cast<std::size_t>(static_cast<std::int64_t>(fy) * width + static_cast<std::int64_t>(fx))] += 1.0f;
  }
  return image;
}

LocRenderedPair render_time_block_halves(std::span<const Localization> locs, const LocRenderSettings& s,
                                         const std::string& source) {
  if (!(s.pixel_size_nm > 0)) throw UsageError("--pixel-size", "the camera pixel size (nm) must be > 0");
  if (!(s.render_px_nm > 0)) throw UsageError("--render-px", "the rendered pixel size (nm) must be > 0");
  if (s.time_blocks < 2 || s.time_blocks % 2 != 0)
    throw UsageError("--time-blocks", "must be even and at least 2, so that both halves get as many blocks (got " +
                                          std::to_string(s.time_blocks) + ")");
  if (locs.empty()) throw InputError(source, "no localizations to split");

  LocRenderedPair out;
  double max_x = 0, max_y = 0;
  out.first_frame = locs.front().frame;
  out.last_frame = locs.front().frame;
  for (const Localization& l : locs) {
    out.first_frame = std::min(out.first_frame, l.frame);
    out.last_frame = std::max(out.last_frame, l.frame);
    if (std::isfinite(l.x)) max_x = std::max(max_x, l.x);
    if (std::isfinite(l.y)) max_y = std::max(max_y, l.y);
  }
  const std::int64_t span = out.last_frame - out.first_frame + 1;
  if (span < s.time_blocks)
    throw InputError(source, "the localizations span " + std::to_string(span) + " frame" + (span == 1 ? "" : "s") +
                                 ", fewer than the " + std::to_string(s.time_blocks) +
                                 " time blocks (give fewer with --time-blocks)");

  const double scale = s.pixel_size_nm / s.render_px_nm;
  const double extent_x = s.width_px > 0 ? static_cast<double>(s.width_px) : max_x + 1.0;
  const double extent_y = s.height_px > 0 ? static_cast<double>(s.height_px) : max_y + 1.0;
  // In double first: a position of 1e300 px must not overflow the cast.
  const double wide = std::ceil(extent_x * scale), high = std::ceil(extent_y * scale);
  if (!(wide <= kMaxFrcRenderSide && high <= kMaxFrcRenderSide))
    throw UsageError("--render-px", "the rendered image would be " + std::to_string(static_cast<long long>(std::min(wide, 9e18))) +
                                        "x" + std::to_string(static_cast<long long>(std::min(high, 9e18))) +
                                        " px: choose larger rendered pixels");
  out.width = static_cast<std::int64_t>(wide);
  out.height = static_cast<std::int64_t>(high);
  out.width = std::max<std::int64_t>(out.width, 2);
  out.height = std::max<std::int64_t>(out.height, 2);

  std::vector<int> order(static_cast<std::size_t>(s.time_blocks));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(s.seed);
  // Fisher-Yates with our own index draws: std::shuffle's order differs between standard libraries.
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
  std::vector<char> in_a(order.size(), 0);
  for (std::size_t i = 0; i < order.size() / 2; ++i) in_a[static_cast<std::size_t>(order[i])] = 1;
  for (std::size_t k = 0; k < in_a.size(); ++k)
    if (in_a[k]) out.blocks_a.push_back(static_cast<int>(k));

  std::vector<Localization> half_a, half_b;
  for (const Localization& l : locs) {
    const std::int64_t block = (l.frame - out.first_frame) * s.time_blocks / span;
    (in_a[static_cast<std::size_t>(block)] ? half_a : half_b).push_back(l);
  }
  out.a = render_histogram(half_a, s, out.width, out.height);
  out.b = render_histogram(half_b, s, out.width, out.height);
  const auto total = [](const std::vector<float>& v) {
    return static_cast<std::int64_t>(std::accumulate(v.begin(), v.end(), 0.0));
  };
  out.count_a = total(out.a);
  out.count_b = total(out.b);
  return out;
}

}  // namespace nanoscopy
