#include "memory/tensor_copy.h"

#include <cstring>

namespace cpufold {
namespace {

void check_shapes(const Tensor& src, const Tensor& dst, const char* op) {
  if (!(src.shape() == dst.shape())) {
    throw InternalError(std::string(op) + " from " + src.describe() + " to " + dst.describe() +
                        ": shapes differ");
  }
}

// Calls fn(src_offset, dst_offset) in elements for every index, last axis fastest.
template <typename Fn>
void for_each_offset(const Tensor& src, const Tensor& dst, Fn&& fn) {
  const int rank = src.rank();
  if (src.numel() == 0) return;
  std::int64_t idx[Shape::kMaxRank] = {};
  std::int64_t so = 0, doff = 0;
  for (std::int64_t n = 0, total = src.numel(); n < total; ++n) {
    fn(so, doff);
    for (int a = rank - 1; a >= 0; --a) {
      so += src.stride(a);
      doff += dst.stride(a);
      if (++idx[a] < src.dim(a)) break;
      so -= src.stride(a) * src.dim(a);
      doff -= dst.stride(a) * dst.dim(a);
      idx[a] = 0;
    }
  }
}

template <typename T>
float to_float(const void* base, std::int64_t off) {
  return static_cast<float>(static_cast<const T*>(base)[off]);
}

float load_as_float(DType t, const void* base, std::int64_t off) {
  switch (t) {
    case DType::f32:
      return to_float<float>(base, off);
    case DType::bf16:
      return to_float<bf16>(base, off);
    case DType::i32:
      return to_float<std::int32_t>(base, off);
    case DType::i64:
      return to_float<std::int64_t>(base, off);
    case DType::u8:
      return to_float<std::uint8_t>(base, off);
  }
  return 0;
}

void store_from_float(DType t, void* base, std::int64_t off, float v) {
  switch (t) {
    case DType::f32:
      static_cast<float*>(base)[off] = v;
      break;
    case DType::bf16:
      static_cast<bf16*>(base)[off] = bf16(v);
      break;
    case DType::i32:
      static_cast<std::int32_t*>(base)[off] = static_cast<std::int32_t>(v);
      break;
    case DType::i64:
      static_cast<std::int64_t*>(base)[off] = static_cast<std::int64_t>(v);
      break;
    case DType::u8:
      static_cast<std::uint8_t*>(base)[off] = static_cast<std::uint8_t>(v);
      break;
  }
}

}  // namespace

void copy_tensor(const Tensor& src, const Tensor& dst) {
  check_shapes(src, dst, "copy");
  if (src.dtype() != dst.dtype()) {
    throw InternalError("copy from " + src.describe() + " to " + dst.describe() +
                        ": dtypes differ");
  }
  const std::size_t esize = dtype_size(src.dtype());
  if (src.is_contiguous() && dst.is_contiguous()) {
    std::memmove(dst.data(), src.data(), src.nbytes());
    return;
  }
  const auto* s = static_cast<const std::byte*>(src.data());
  auto* d = static_cast<std::byte*>(dst.data());
  const auto e = static_cast<std::int64_t>(esize);
  for_each_offset(src, dst, [&](std::int64_t so, std::int64_t doff) {
    std::memcpy(d + doff * e, s + so * e, esize);
  });
}

void convert_tensor(const Tensor& src, const Tensor& dst) {
  check_shapes(src, dst, "convert");
  if (src.dtype() == dst.dtype()) return copy_tensor(src, dst);
  for_each_offset(src, dst, [&](std::int64_t so, std::int64_t doff) {
    store_from_float(dst.dtype(), dst.data(), doff, load_as_float(src.dtype(), src.data(), so));
  });
}

}  // namespace cpufold
