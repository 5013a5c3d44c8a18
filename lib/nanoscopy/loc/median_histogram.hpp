// The median localization precision of a run, in bounded memory.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace nanoscopy {

// Median of a stream of precisions in bounded memory: 0.1 nm bins up to 1 µm.
class MedianHistogram {
 public:
  void add(double v) {
    if (!std::isfinite(v) || v < 0) return;
    ++bins_[static_cast<std::size_t>(std::min(v / bin_width, static_cast<double>(bins_.size() - 1)))];
    ++count_;
  }
  double median() const {
    std::int64_t seen = 0;
    for (std::size_t i = 0; i < bins_.size(); ++i)
      if ((seen += bins_[i]) * 2 >= count_ && count_ > 0) return (static_cast<double>(i) + 0.5) * bin_width;
    return 0;
  }

 private:
  static constexpr double bin_width = 0.1;  // nm per bin
  std::vector<std::int64_t> bins_ = std::vector<std::int64_t>(10000, 0);
  std::int64_t count_ = 0;
};

}  // namespace nanoscopy
