// A 5x7 bitmap font for plot_png.cpp: upper-case letters, digits and common
// punctuation, each glyph 7 rows of 5 cells ('#' = ink), top row first.
#pragma once

namespace nanoscopy::plot_font {

constexpr int kGlyphWidth = 5, kGlyphHeight = 7, kAdvance = 6;

// The 35 cells of `c` (lower case drawn as upper case; unknown characters as '?').
const char* glyph(char c);

}  // namespace nanoscopy::plot_font
