// Reading PNG bytes back to pixels with cairo's PNG reader, to check what cpufold wrote.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cpufold::testing {

struct DecodedPng {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // [height, width, 3]
};

// Fails the calling test (and returns an empty image) when cairo cannot read the bytes or
// the image is not opaque 8-bit RGB(A).
DecodedPng decode_png(const std::string& bytes);

// Number of distinct colours in the image.
std::size_t distinct_colours(const DecodedPng& png);

}  // namespace cpufold::testing
