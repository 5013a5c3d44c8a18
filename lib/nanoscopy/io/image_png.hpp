// A float image as an 8-bit grayscale PNG for a quick look (bench figures,
// docs): values mapped linearly from the `low` to the `high` percentile.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace nanoscopy {

// Written atomically; OutputError naming the path on failure.
void write_gray_png(const std::string& path, std::int64_t width, std::int64_t height, std::span<const float> pixels,
                    double low_percentile = 0.5, double high_percentile = 99.8);

}  // namespace nanoscopy
