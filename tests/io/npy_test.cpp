#include "io/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "io/npy_writer.h"
#include "tests/io/params_test_helpers.h"

namespace cpufold {
namespace {

using testing::error_message;
using testing::has;
using testing::npy_bytes;
using testing::npy_from_dict;
using testing::raw_bytes;

constexpr std::string_view kSource = "array 'w.npy' in parameter file /tmp/p.npz";

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// The view points into `bytes`: keep the string alive while reading `data`.
NpyView parse(const std::string& bytes) {
  return parse_npy(as_bytes(bytes), kSource);
}

TEST(NpyTest, ParsesFloat32InEveryHeaderVersion) {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  for (int version : {1, 2, 3}) {
    const std::string file = npy_bytes("<f4", "(2, 3)", raw_bytes(values), false, version);
    const NpyView v = parse(file);
    EXPECT_EQ(v.header.dtype, DType::f32) << "version " << version;
    EXPECT_EQ(v.header.shape, Shape({2, 3}));
    EXPECT_FALSE(v.header.widen_f16);
    EXPECT_EQ(v.header.data_offset % 64, 0u);
    ASSERT_EQ(v.data.size(), 24u);
    EXPECT_EQ(std::memcmp(v.data.data(), values.data(), 24), 0);
  }
}

TEST(NpyTest, ParsesScalarAndEmptyShapes) {
  const NpyView scalar = parse(npy_bytes("<f4", "()", raw_bytes(std::vector<float>{7.5f})));
  EXPECT_EQ(scalar.header.shape.rank(), 0);
  EXPECT_EQ(scalar.header.stored_bytes(), 4u);

  const NpyView empty = parse(npy_bytes("<f4", "(0, 3)", ""));
  EXPECT_EQ(empty.header.shape, Shape({0, 3}));
  EXPECT_EQ(empty.data.size(), 0u);

  const NpyView vector = parse(npy_bytes("<i4", "(3,)", raw_bytes(std::vector<int>{1, 2, 3})));
  EXPECT_EQ(vector.header.shape, Shape({3}));
}

TEST(NpyTest, MapsIntegerAndByteTypes) {
  EXPECT_EQ(parse(npy_bytes("<i4", "(1,)", std::string(4, '\0'))).header.dtype, DType::i32);
  EXPECT_EQ(parse(npy_bytes("<i8", "(1,)", std::string(8, '\0'))).header.dtype, DType::i64);
  EXPECT_EQ(parse(npy_bytes("|u1", "(2,)", std::string(2, '\0'))).header.dtype, DType::u8);
  EXPECT_EQ(parse(npy_bytes("<u1", "(2,)", std::string(2, '\0'))).header.dtype, DType::u8);
}

TEST(NpyTest, WidensFloat16ToFloat32) {
  // 1, -2, 65504 (largest half), 2^-24 (smallest subnormal), +inf, -0.
  const std::vector<std::uint16_t> halves = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000};
  const std::string file = npy_bytes("<f2", "(6,)", raw_bytes(halves));
  const NpyView v = parse(file);
  EXPECT_EQ(v.header.dtype, DType::f32);
  EXPECT_TRUE(v.header.widen_f16);
  EXPECT_EQ(v.header.stored_bytes(), 12u);
  EXPECT_EQ(v.header.loaded_bytes(), 24u);
  std::vector<float> out(6);
  load_npy_data(v.header, v.data, std::as_writable_bytes(std::span(out)));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 65504.0f);
  EXPECT_EQ(out[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(out[4], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(out[5]) && out[5] == 0.0f);
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
}

TEST(NpyTest, RejectsBadMagic) {
  const std::string msg = error_message([] { parse("NOT A NUMPY FILE AT ALL........"); });
  EXPECT_TRUE(has(msg, kSource));
  EXPECT_TRUE(has(msg, "is not a .npy array"));
}

TEST(NpyTest, RejectsMalformedHeader) {
  std::string file = npy_bytes("<f4", "(2,)", std::string(8, '\0'));
  file.replace(file.find("'shape'"), 7, "'shap3'");
  std::string msg = error_message([&] { parse(file); });
  EXPECT_TRUE(has(msg, kSource));
  EXPECT_TRUE(has(msg, "malformed .npy header"));
  EXPECT_TRUE(has(msg, "shap3"));

  file = npy_bytes("<f4", "(2, x)", std::string(8, '\0'));
  msg = error_message([&] { parse(file); });
  EXPECT_TRUE(has(msg, "malformed .npy header"));
}

TEST(NpyTest, RejectsUnknownVersionAndHugeHeaderLength) {
  std::string file = npy_bytes("<f4", "(2,)", std::string(8, '\0'));
  file[6] = 9;
  EXPECT_TRUE(has(error_message([&] { parse(file); }), "version 9"));

  file = npy_bytes("<f4", "(2,)", std::string(8, '\0'), false, 2);
  file[11] = '\x7f';  // header length ~2 GB
  EXPECT_TRUE(has(error_message([&] { parse(file); }), "corrupt .npy header length"));
}

TEST(NpyTest, RejectsUnsupportedDtypes) {
  for (const char* descr : {"<c8", "|b1", "<f8", "<U4"}) {
    const std::string msg = error_message([&] { parse(npy_bytes(descr, "(1,)", "12345678")); });
    EXPECT_TRUE(has(msg, kSource));
    EXPECT_TRUE(has(msg, std::string("unsupported dtype '") + descr + "'"));
  }
  const std::string file =
      npy_from_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "1234");
  EXPECT_TRUE(has(error_message([&] { parse(file); }), "structured dtype"));
}

// Fortran (column-major) arrays occur in real exports, our reference files included: they are
// reordered to C order on load.
TEST(NpyTest, ReordersFortranOrderToC) {
  // v[i, j, k] = 100 i + 10 j + k, written with axis 0 varying fastest.
  std::vector<float> column_major;
  std::vector<std::uint16_t> column_major_half;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) {
        column_major.push_back(static_cast<float>(100 * i + 10 * j + k));
        column_major_half.push_back(static_cast<std::uint16_t>(0x3c00 + 100 * i + 10 * j + k));
      }
  const std::string file = npy_bytes("<f4", "(2, 3, 4)", raw_bytes(column_major), true);
  const NpyView v = parse(file);
  EXPECT_TRUE(v.header.fortran_order);
  EXPECT_TRUE(v.header.needs_conversion());
  std::vector<float> out(24);
  load_npy_data(v.header, v.data, std::as_writable_bytes(std::span(out)));
  const std::string half_file = npy_bytes("<f2", "(2, 3, 4)", raw_bytes(column_major_half), true);
  const NpyView h = parse(half_file);
  std::vector<float> out_half(24);
  load_npy_data(h.header, h.data, std::as_writable_bytes(std::span(out_half)));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const auto c = static_cast<std::size_t>((i * 3 + j) * 4 + k);
        EXPECT_EQ(out[c], static_cast<float>(100 * i + 10 * j + k)) << i << j << k;
        const auto bits = static_cast<std::uint16_t>(0x3c00 + 100 * i + 10 * j + k);
        EXPECT_EQ(out_half[c], half_to_float(bits)) << i << j << k;
      }
  // A vector is the same bytes in either order: nothing to convert.
  EXPECT_FALSE(parse(npy_bytes("<f4", "(6,)", std::string(24, '\0'), true)).header.fortran_order);
}

TEST(NpyTest, ReordersFortranOrderOfEveryElementSize) {
  // A 3 x 2 matrix m[r, c] = 10 r + c, column-major.
  const std::vector<std::uint8_t> u8 = {0, 10, 20, 1, 11, 21};
  const std::vector<std::int64_t> i64 = {0, 10, 20, 1, 11, 21};
  const std::string file_a = npy_bytes("|u1", "(3, 2)", raw_bytes(u8), true);
  const std::string file_b = npy_bytes("<i8", "(3, 2)", raw_bytes(i64), true);
  const NpyView a = parse(file_a);  // views into file_a
  const NpyView b = parse(file_b);
  std::vector<std::uint8_t> out_a(6);
  std::vector<std::int64_t> out_b(6);
  load_npy_data(a.header, a.data, std::as_writable_bytes(std::span(out_a)));
  load_npy_data(b.header, b.data, std::as_writable_bytes(std::span(out_b)));
  EXPECT_EQ(out_a, (std::vector<std::uint8_t>{0, 1, 10, 11, 20, 21}));
  EXPECT_EQ(out_b, (std::vector<std::int64_t>{0, 1, 10, 11, 20, 21}));
}

TEST(NpyTest, RejectsBigEndian) {
  const std::string msg =
      error_message([] { parse(npy_bytes(">f4", "(2,)", std::string(8, '\0'))); });
  EXPECT_TRUE(has(msg, kSource));
  EXPECT_TRUE(has(msg, "big-endian ('>f4')"));
  // Byte order is meaningless for single bytes.
  EXPECT_NO_THROW(parse(npy_bytes(">u1", "(2,)", std::string(2, '\0'))));
}

TEST(NpyTest, RejectsTruncatedData) {
  const std::string file = npy_bytes("<f4", "(2, 3)", std::string(20, '\0'));
  const std::string msg = error_message([&] { parse(file); });
  EXPECT_TRUE(has(msg, kSource));
  EXPECT_TRUE(has(msg, "truncated"));
  EXPECT_TRUE(has(msg, "24 bytes"));
  EXPECT_TRUE(has(msg, "[2, 3]"));
}

TEST(NpyTest, RejectsTruncatedHeaderAndTrailingBytes) {
  const std::string file = npy_bytes("<f4", "(2, 3)", std::string(24, '\0'));
  EXPECT_TRUE(has(error_message([&] { parse(file.substr(0, 40)); }), "truncated"));
  EXPECT_TRUE(has(error_message([&] { parse(file.substr(0, 8)); }), "truncated"));
  EXPECT_TRUE(has(error_message([&] { parse(file + "xx"); }), "2 unexpected bytes"));
}

TEST(NpyTest, RejectsTooManyDimensions) {
  const std::string msg = error_message(
      [] { parse(npy_bytes("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)", std::string(4, '\0'))); });
  EXPECT_TRUE(has(msg, "more than 8 dimensions"));
}

}  // namespace
}  // namespace cpufold

namespace cpufold {
namespace {

TEST(NpyWriter, F32BytesParseBackWithTheSameShapeAndValues) {
  std::vector<float> values = {1.5f, -2.f, 3.25f, 0.f, 7.f, 8.f};
  for (const Shape& shape : {Shape{6}, Shape{2, 3}, Shape{1, 2, 3}}) {
    const std::string bytes = npy_f32_bytes(Tensor(values.data(), DType::f32, shape));
    EXPECT_EQ((bytes.size() - values.size() * 4) % 64, 0u);  // header aligned as numpy does
    const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
    const NpyView view = parse_npy({data, bytes.size()}, "test");
    EXPECT_EQ(view.header.shape, shape);
    EXPECT_EQ(view.header.dtype, DType::f32);
    ASSERT_EQ(view.data.size(), values.size() * 4);
    EXPECT_EQ(std::memcmp(view.data.data(), values.data(), view.data.size()), 0);
  }
}

}  // namespace
}  // namespace cpufold
