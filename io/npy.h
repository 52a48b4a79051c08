// NumPy `.npy` arrays (header versions 1, 2 and 3), as stored inside AF2 `.npz` files.
// Supported: little-endian '<f4' (f32), '<f2' (IEEE half, widened to f32 on load because
// cpufold has no f16 dtype), '<i4' (i32), '<i8' (i64), '|u1' (u8); shape () allowed.
// Fortran-order arrays are reordered to C order on load: AF2 parameter files exported from
// transposed (PyTorch/OpenFold) weights contain them, our own reference files included.
// Everything else (big-endian, other dtypes) is refused with a WeightsError that names the
// array and says how to fix it.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "memory/dtype.h"
#include "memory/tensor.h"

namespace cpufold {

// What a .npy header says about the array that follows it.
struct NpyHeader {
  DType dtype = DType::f32;     // element type after loading
  Shape shape;                  // () for a scalar
  bool widen_f16 = false;       // stored as '<f2': each element is widened to f32 on load
  bool fortran_order = false;   // stored column-major (rank >= 2): reordered to C on load
  std::size_t data_offset = 0;  // bytes from the start of the .npy to the first element

  std::size_t stored_element_size() const { return widen_f16 ? 2 : dtype_size(dtype); }
  std::size_t stored_bytes() const;  // bytes of element data in the file
  std::size_t loaded_bytes() const;  // bytes once loaded (twice stored_bytes for f16)
  // True when load_npy_data must do more than copy the stored bytes.
  bool needs_conversion() const { return widen_f16 || fortran_order; }
};

// Enough leading bytes of any .npy version to compute its header size.
inline constexpr std::size_t kNpyPreambleBytes = 12;

// Size of magic + version + header-length field + header, read from the first bytes of a
// .npy (at least 10, ideally kNpyPreambleBytes). `source` names the array in error messages,
// e.g. "array 'x.npy' in parameter file /p/params.npz".
std::size_t npy_header_size(std::span<const std::byte> prefix, std::string_view source);

// Parses the header; `prefix` must hold at least npy_header_size(prefix) bytes.
NpyHeader parse_npy_header(std::span<const std::byte> prefix, std::string_view source);

// Copies element data as stored (`header.stored_bytes()`) into `dst`
// (`header.loaded_bytes()`) as a C-order array: widens f16 to f32 and reorders Fortran order.
void load_npy_data(const NpyHeader& header, std::span<const std::byte> stored,
                   std::span<std::byte> dst);

// A whole .npy in memory: the parsed header and its stored element bytes (as stored: pass
// them through load_npy_data when header.needs_conversion()). Throws when the
// buffer is shorter (truncated) or longer than the header promises.
struct NpyView {
  NpyHeader header;
  std::span<const std::byte> data;
};
NpyView parse_npy(std::span<const std::byte> buffer, std::string_view source);

// IEEE 754 binary16 to binary32; exact for every value, including subnormals, inf and NaN.
float half_to_float(std::uint16_t bits);

}  // namespace cpufold
