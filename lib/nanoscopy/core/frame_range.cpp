#include "nanoscopy/core/frame_range.hpp"

#include <charconv>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

std::optional<std::int64_t> parse_index(const std::string& part, const std::string& whole) {
  if (part.empty()) return std::nullopt;
  std::int64_t value = 0;
  const char* first = part.data();
  const char* last = part.data() + part.size();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last)
    throw UsageError("--frames", "'" + whole + "' is not a frame range (expected A:B, e.g. 0:1000 or -500:)");
  return value;
}

}  // namespace

FrameRange FrameRange::parse(const std::string& text) {
  FrameRange range;
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    range.begin = parse_index(text, text);
    if (!range.begin) throw UsageError("--frames", "empty frame range");
    range.end = *range.begin == -1 ? std::nullopt : std::optional<std::int64_t>(*range.begin + 1);
    return range;
  }
  if (text.find(':', colon + 1) != std::string::npos)
    throw UsageError("--frames", "'" + text + "' has more than one ':' (expected A:B)");
  range.begin = parse_index(text.substr(0, colon), text);
  range.end = parse_index(text.substr(colon + 1), text);
  return range;
}

FrameRange::Resolved FrameRange::resolve(std::int64_t frames, const std::string& where) const {
  auto absolute = [frames](std::int64_t i) { return i < 0 ? i + frames : i; };
  const std::int64_t first = begin ? absolute(*begin) : 0;
  const std::int64_t last = end ? absolute(*end) : frames;
  if (first < 0 || first >= frames || last > frames || last <= first)
    throw InputError(where, "frame range " + to_string() + " is outside the stack of " +
                                std::to_string(frames) + " frame" + (frames == 1 ? "" : "s") +
                                " (valid: 0:" + std::to_string(frames) + ")");
  return {first, last};
}

std::string FrameRange::to_string() const {
  return (begin ? std::to_string(*begin) : std::string()) + ":" + (end ? std::to_string(*end) : std::string());
}

}  // namespace nanoscopy
