#include "nanoscopy/frc/frc_validate.hpp"

#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

void check_frc_geometry(const FrcGeometry& g) {
  const std::string size = std::to_string(g.width) + "x" + std::to_string(g.height);
  if (g.width < 2 || g.height < 2)
    throw UsageError("frc", "an image of " + size + " px is too small for an FRC (2x2 at least)");
  if (g.width > (1LL << 31) - 1 || g.height > (1LL << 31) - 1 || g.width * g.height >= (1LL << 32))
    throw UsageError("frc", "an image of " + size + " px is too large for an FRC (fewer than 2^32 pixels)");
  if (!(g.tukey_fraction >= 0 && g.tukey_fraction <= 0.5))
    throw UsageError("tukey fraction", "must lie in [0, 0.5] (got " + std::to_string(g.tukey_fraction) + ")");
}

void check_frc_inputs(std::span<const float> a, std::span<const float> b, const FrcGeometry& g) {
  const auto n = static_cast<std::size_t>(g.width * g.height);
  if (a.size() != n || b.size() != n)
    throw InputError("frc", "the images have " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                " pixels; the plan is for " + std::to_string(g.width) + "x" + std::to_string(g.height));
}

}  // namespace nanoscopy
