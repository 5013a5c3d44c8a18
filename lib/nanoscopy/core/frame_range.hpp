// `--frames A:B`: frames A..B-1 (Python slice rules: end exclusive, negative
// counts from the end, either side may be empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nanoscopy {

struct FrameRange {
  std::optional<std::int64_t> begin;  // empty: from the first frame
  std::optional<std::int64_t> end;    // empty: to the last frame

  // Parses "A:B", "A:", ":B", ":" or a single index "A" (that frame alone).
  // Throws UsageError naming the text.
  static FrameRange parse(const std::string& text);

  // Concrete [first, last) for a stack of `frames` frames. Throws InputError
  // naming `where` when the range is empty or outside the stack.
  struct Resolved {
    std::int64_t first;
    std::int64_t last;
    std::int64_t count() const { return last - first; }
  };
  Resolved resolve(std::int64_t frames, const std::string& where) const;

  std::string to_string() const;
};

}  // namespace nanoscopy
