// "WxH" (e.g. 1024x1024) as two positive whole numbers: smre --size, frc --field.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace nanoscopy {

// nullopt unless the whole text is W 'x' H with W, H >= 1.
inline std::optional<std::pair<std::int64_t, std::int64_t>> parse_frame_size(std::string_view text) {
  const auto x = text.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  std::int64_t w = 0, h = 0;
  const auto whole = [](std::string_view part, std::int64_t& v) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    return !part.empty() && ec == std::errc() && end == part.data() + part.size() && v >= 1;
  };
  if (!whole(text.substr(0, x), w) || !whole(text.substr(x + 1), h)) return std::nullopt;
  return std::pair{w, h};
}

}  // namespace nanoscopy
