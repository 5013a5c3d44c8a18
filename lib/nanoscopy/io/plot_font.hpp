// A 5x7 bitmap font for plot_png.cpp: upper-case letters, digits and common
// punctuation, each glyph 7 rows of 5 cells ('#' = ink), top row first.
#pragma once

#include <string>

namespace nanoscopy::plot_font {

constexpr int kGlyphWidth = 5, kGlyphHeight = 7, kAdvance = 6;

// The 35 cells of `c` (lower case drawn as upper case; unknown characters as '?').
const char* glyph(char c);

// Calls ink(column, row) for every inked cell of `text` set from column 0, each glyph kAdvance
// columns after the last, rows 0 to kGlyphHeight − 1 from the top.
template <class Ink>
void each_ink_cell(const std::string& text, Ink&& ink) {
  int pen = 0;
  for (char c : text) {
    const char* cells = glyph(c);
    for (int gy = 0; gy < kGlyphHeight; ++gy)
      for (int gx = 0; gx < kGlyphWidth; ++gx)
        if (cells && cells[gy * kGlyphWidth + gx] == '#') ink(pen + gx, gy);
    pen += kAdvance;
  }
}

}  // namespace nanoscopy::plot_font
