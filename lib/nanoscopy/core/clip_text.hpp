// Bounded quoting of user values in one-line errors: a 50 MB CSV field or a
// 30 MB parameter value is quoted by its head, never whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nanoscopy {

// The most characters (bytes) of a user value an error quotes.
inline constexpr std::size_t kQuoteMax = 200;
// The most characters (bytes) of the one error line a tool prints.
inline constexpr std::size_t kErrorLineMax = 600;

namespace clip_detail {
// The largest cut ≤ n that does not split a UTF-8 character of `text`.
inline std::size_t utf8_cut(std::string_view text, std::size_t n) {
  if (n >= text.size()) return text.size();
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}
}  // namespace clip_detail

// `text` itself when it has at most `max` bytes, else its first bytes and "…" (the whole ≤ max + 3 bytes).
inline std::string clip_text(std::string_view text, std::size_t max = kQuoteMax) {
  if (text.size() <= max) return std::string(text);
  std::string out(text.substr(0, clip_detail::utf8_cut(text, max)));
  out += "\u2026";
  return out;
}

// 'text', clipped as clip_text: for quoting a user's value in an error. (Not `quoted`: ADL would
// find std::quoted for a std::string argument.)
inline std::string quote_value(std::string_view text, std::size_t max = kQuoteMax) {
  return "'" + clip_text(text, max) + "'";
}

// A line of at most about `max` bytes: when longer, its head and its tail (where
// the problem is usually said) around " … ".
inline std::string clip_line(std::string_view text, std::size_t max = kErrorLineMax) {
  if (text.size() <= max) return std::string(text);
  const std::size_t tail = max / 3, head = max - tail;
  std::size_t from = text.size() - tail;
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  return std::string(text.substr(0, clip_detail::utf8_cut(text, head))) + " \u2026 " + std::string(text.substr(from));
}

}  // namespace nanoscopy
