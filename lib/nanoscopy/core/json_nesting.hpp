// The nesting depth of JSON text, found by one pass over its bytes: a reader
// checks it before building a tree whose printing (nlohmann's dump) recurses.
#pragma once

#include <cstddef>
#include <string_view>

namespace nanoscopy {

// The deepest nesting of [ and { in `text` outside strings (0 for a scalar). Malformed
// text gives some number too; the parser reports what is wrong with it.
inline std::size_t json_nesting_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace nanoscopy
