#include "io/npy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "memory/error.h"

namespace cpufold {

// .npy data is little-endian and copied verbatim, so the host must be little-endian too.
static_assert(std::endian::native == std::endian::little, "cpufold assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// NumPy itself caps headers far below this; anything larger is a corrupt length field.
constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr std::string_view kSupported =
    "cpufold reads '<f4', '<f2' (widened to float32), '<i4', '<i8' and '|u1'";

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw WeightsError(std::string(source) + " " + what);
}

std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 160;
  std::string out(text.substr(0, kMax));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  if (text.size() > kMax) out += "...";
  return out;
}

std::uint32_t read_le(std::span<const std::byte> bytes, std::size_t offset, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < width; ++i)
    v |= std::to_integer<std::uint32_t>(bytes[offset + i]) << (8 * i);
  return v;
}

// The header is a Python dict literal, e.g. "{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }". This parser accepts exactly the subset NumPy writes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  NpyHeader parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<Shape> shape;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        skip_space();
        if (peek() == '[')
          fail(source_, "has an unsupported structured dtype; " + std::string(kSupported));
        descr = parse_string();
      } else if (key == "fortran_order") {
        fortran_order = parse_bool();
      } else if (key == "shape") {
        shape = parse_shape();
      } else {
        malformed("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++pos_;
    }
    expect('}');
    skip_space();
    if (pos_ != text_.size()) malformed("text after the closing '}'");
    if (!descr || !fortran_order || !shape) {
      malformed("it must name 'descr', 'fortran_order' and 'shape'");
    }
    return make_header(*descr, *fortran_order, *shape);
  }

 private:
  NpyHeader make_header(const std::string& descr, bool fortran_order, const Shape& shape) {
    NpyHeader h;
    h.shape = shape;
    const bool has_order =
        !descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos;
    const char order = has_order ? descr[0] : '=';
    const std::string_view type = std::string_view(descr).substr(has_order ? 1 : 0);
    if (type == "f4") {
      h.dtype = DType::f32;
    } else if (type == "f2") {
      h.dtype = DType::f32;  // no f16 DType: widened on load
      h.widen_f16 = true;
    } else if (type == "i4") {
      h.dtype = DType::i32;
    } else if (type == "i8") {
      h.dtype = DType::i64;
    } else if (type == "u1") {
      h.dtype = DType::u8;
    } else {
      fail(source_, "has unsupported dtype '" + descr + "'; " + std::string(kSupported));
    }
    if (order == '>' && h.stored_element_size() > 1) {
      fail(source_, "is big-endian ('" + descr +
                        "'); cpufold reads little-endian arrays only: re-save it with numpy as "
                        "arr.astype(arr.dtype.newbyteorder('<'))");
    }
    // For rank <= 1 Fortran and C order are the same bytes.
    h.fortran_order = fortran_order && shape.rank() > 1;
    // Refuse shapes whose byte size overflows, so later size arithmetic is safe.
    std::size_t bytes = 2 * h.stored_element_size();
    for (std::int64_t d : shape.dims()) {
      if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(d), &bytes)) {
        fail(source_, "has shape " + shape.str() + ", too large to address");
      }
    }
    return h;
  }

  [[noreturn]] void malformed(const std::string& why) {
    fail(source_, "has a malformed .npy header (" + why + "): \"" + printable(text_) + "\"");
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  void expect(char c) {
    skip_space();
    if (peek() != c) malformed(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') malformed("expected a quoted string");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) malformed("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    skip_space();
    for (const std::string_view word : {"True", "False"}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return word == "True";
      }
    }
    malformed("'fortran_order' must be True or False");
  }

  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      std::int64_t dim = 0;
      const char* first = text_.data() + pos_;
      const char* last = text_.data() + text_.size();
      auto [ptr, ec] = std::from_chars(first, last, dim);
      if (ec != std::errc() || dim < 0) malformed("shape entries must be non-negative integers");
      pos_ += static_cast<std::size_t>(ptr - first);
      if (peek() == 'L') ++pos_;  // Python 2 long literal
      if (shape.rank() == Shape::kMaxRank) {
        fail(source_, "has more than " + std::to_string(Shape::kMaxRank) + " dimensions");
      }
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        malformed("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t pos_ = 0;
};

}  // namespace

std::size_t NpyHeader::stored_bytes() const {
  return stored_element_size() * static_cast<std::size_t>(shape.numel());
}

std::size_t NpyHeader::loaded_bytes() const {
  const std::size_t stored = stored_bytes();
  return widen_f16 ? stored * 2 : stored;
}

std::size_t npy_header_size(std::span<const std::byte> prefix, std::string_view source) {
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()), prefix.size());
  if (text.substr(0, kMagic.size()) != kMagic.substr(0, std::min(kMagic.size(), text.size()))) {
    fail(source, "is not a .npy array (it does not start with the bytes \"\\x93NUMPY\")");
  }
  if (prefix.size() < 10) fail(source, "is truncated: it ends inside the .npy header");
  const unsigned major = std::to_integer<unsigned>(prefix[6]);
  const std::size_t width = major == 1 ? 2 : 4;
  if (major < 1 || major > 3) {
    fail(source, "has .npy format version " + std::to_string(major) +
                     ".x; cpufold reads versions 1, 2 and 3");
  }
  if (prefix.size() < 8 + width) fail(source, "is truncated: it ends inside the .npy header");
  const std::size_t header_len = read_le(prefix, 8, width);
  if (header_len > kMaxHeaderBytes) {
    fail(source, "has a corrupt .npy header length (" + std::to_string(header_len) + " bytes)");
  }
  return 8 + width + header_len;
}

NpyHeader parse_npy_header(std::span<const std::byte> prefix, std::string_view source) {
  const std::size_t total = npy_header_size(prefix, source);
  if (prefix.size() < total) fail(source, "is truncated: it ends inside the .npy header");
  const std::size_t start = std::to_integer<unsigned>(prefix[6]) == 1 ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()) + start, total - start);
  NpyHeader h = HeaderParser(text, source).parse();
  h.data_offset = total;
  return h;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: shift the mantissa up until it has an implicit leading one.
    exp = 127 - 15 + 1;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

namespace {

// Element `src_index` of `src` to element `dst_index` of `dst`, widening f16 when asked.
template <std::size_t kStored, bool kWiden>
void put(std::span<const std::byte> src, std::size_t src_index, std::span<std::byte> dst,
         std::size_t dst_index) {
  if constexpr (kWiden) {
    std::uint16_t h;
    std::memcpy(&h, src.data() + 2 * src_index, 2);
    const float f = half_to_float(h);
    std::memcpy(dst.data() + 4 * dst_index, &f, 4);
  } else {
    std::memcpy(dst.data() + kStored * dst_index, src.data() + kStored * src_index, kStored);
  }
}

// Walks the C-order index of `shape` while tracking the element's Fortran-order position
// (axis 0 fastest in the source), so `dst` is filled sequentially.
template <std::size_t kStored, bool kWiden>
void reorder_fortran(const Shape& shape, std::span<const std::byte> src, std::span<std::byte> dst) {
  const int rank = shape.rank();
  std::array<std::size_t, Shape::kMaxRank> stride{}, index{};
  std::size_t step = 1;
  for (int k = 0; k < rank; ++k) {
    stride[static_cast<std::size_t>(k)] = step;
    step *= static_cast<std::size_t>(shape[k]);
  }
  const auto n = static_cast<std::size_t>(shape.numel());
  std::size_t from = 0;
  for (std::size_t to = 0; to < n; ++to) {
    put<kStored, kWiden>(src, from, dst, to);
    for (int k = rank - 1; k >= 0; --k) {
      const auto a = static_cast<std::size_t>(k);
      from += stride[a];
      if (++index[a] < static_cast<std::size_t>(shape[k])) break;
      from -= stride[a] * index[a];
      index[a] = 0;
    }
  }
}

template <std::size_t kStored, bool kWiden>
void convert(const NpyHeader& h, std::span<const std::byte> src, std::span<std::byte> dst) {
  if (h.fortran_order) {
    reorder_fortran<kStored, kWiden>(h.shape, src, dst);
  } else {
    for (std::size_t i = 0; i < src.size() / kStored; ++i) put<kStored, kWiden>(src, i, dst, i);
  }
}

}  // namespace

void load_npy_data(const NpyHeader& header, std::span<const std::byte> stored,
                   std::span<std::byte> dst) {
  if (stored.size() != header.stored_bytes() || dst.size() != header.loaded_bytes()) {
    throw InternalError("load_npy_data: buffer sizes do not match the .npy header");
  }
  if (!header.needs_conversion()) {
    if (!stored.empty()) std::memcpy(dst.data(), stored.data(), stored.size());
    return;
  }
  if (header.widen_f16) return convert<2, true>(header, stored, dst);
  switch (header.stored_element_size()) {
    case 1:
      return convert<1, false>(header, stored, dst);
    case 4:
      return convert<4, false>(header, stored, dst);
    case 8:
      return convert<8, false>(header, stored, dst);
  }
  throw InternalError("load_npy_data: unexpected element size");
}

NpyView parse_npy(std::span<const std::byte> buffer, std::string_view source) {
  const std::size_t header_size = npy_header_size(buffer, source);
  NpyHeader header = parse_npy_header(buffer, source);
  const std::size_t want = header.stored_bytes();
  const std::size_t have = buffer.size() - header_size;
  if (have < want) {
    fail(source, "is truncated: its header promises " + std::to_string(want) +
                     " bytes of data for shape " + header.shape.str() + " but only " +
                     std::to_string(have) + " follow");
  }
  if (have > want) {
    fail(source, "has " + std::to_string(have - want) +
                     " unexpected bytes after the data its header describes");
  }
  return {header, buffer.subspan(header_size, want)};
}

}  // namespace cpufold
