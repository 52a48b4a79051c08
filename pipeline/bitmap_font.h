// A built-in 5x7 bitmap font (printable ASCII and Å) for labelling plots.
#pragma once

#include <string_view>

#include "io/png_image.h"

namespace cpufold {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
inline constexpr int kGlyphAdvance = 6;  // one blank column between glyphs

// Width in pixels of `text` (UTF-8) drawn at `scale`; its height is kGlyphHeight * scale.
int text_width(std::string_view text, int scale);

// Draws `text` with its top-left corner at (x, y), each font pixel a scale x scale square.
// Characters outside the font are drawn as '?'.
void draw_text(RgbImage& image, int x, int y, std::string_view text, Rgb colour, int scale);

// The same, rotated to read bottom to top (y-axis labels): the text starts at (x, y) and runs
// upwards; its glyph tops face left.
void draw_text_up(RgbImage& image, int x, int y, std::string_view text, Rgb colour, int scale);

}  // namespace cpufold
