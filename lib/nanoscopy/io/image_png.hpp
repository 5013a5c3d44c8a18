// A float image as an 8-bit grayscale PNG for a quick look (bench figures,
// docs): values mapped linearly from the `low` to the `high` percentile; and
// an RGB picture (fit2d render --color z).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nanoscopy {

// The value at `fraction` (0..1) of the way through `values` sorted (index fraction * (n - 1), rounded
// down); reorders `values`. Non-empty `values`.
float order_statistic(std::vector<float>& values, double fraction);

// Written atomically; OutputError naming the path on failure.
void write_gray_png(const std::string& path, std::int64_t width, std::int64_t height, std::span<const float> pixels,
                    double low_percentile = 0.5, double high_percentile = 99.8);

// Three planes (each width * height, values in [0, 1], clamped; NaN as 0) as an
// 8-bit RGB PNG, written atomically; OutputError naming the path on failure.
void write_rgb_png(const std::string& path, std::int64_t width, std::int64_t height, std::span<const float> red,
                   std::span<const float> green, std::span<const float> blue);

}  // namespace nanoscopy
