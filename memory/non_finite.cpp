#include "memory/non_finite.h"

#include <cstring>

namespace cpufold {
namespace {

// Exponent all ones: Inf (mantissa zero) or NaN. Bit tests, not std::isfinite, so the loop
// vectorises and -ffast-math could not fold it away.
struct F32Bits {
  static constexpr std::uint32_t exp = 0x7f800000u, mant = 0x007fffffu;
  static std::uint32_t load(const std::byte* p) {
    std::uint32_t u;
    std::memcpy(&u, p, sizeof u);
    return u;
  }
};
struct Bf16Bits {
  static constexpr std::uint32_t exp = 0x7f80u, mant = 0x007fu;
  static std::uint32_t load(const std::byte* p) {
    std::uint16_t u;
    std::memcpy(&u, p, sizeof u);
    return u;
  }
};

template <typename Bits>
void scan(const std::byte* base, const Tensor& t, NonFinite& out) {
  const std::int64_t size = static_cast<std::int64_t>(dtype_size(t.dtype()));
  auto visit = [&](const std::byte* p, std::int64_t flat) {
    const std::uint32_t u = Bits::load(p);
    if ((u & Bits::exp) != Bits::exp) return;
    if (out.count++ == 0) out.first = flat;
    if ((u & Bits::mant) != 0) ++out.nan;
  };
  const std::int64_t n = t.numel();
  if (t.is_contiguous()) {
    // A branch-free count first: the common all-finite case costs one streaming pass.
    std::int64_t hits = 0;
    for (std::int64_t i = 0; i < n; ++i)
      hits += (Bits::load(base + i * size) & Bits::exp) == Bits::exp;
    if (hits == 0) return;
    for (std::int64_t i = 0; i < n; ++i) visit(base + i * size, i);
    return;
  }
  // Strided: walk the index odometer-style.
  const int rank = t.rank();
  std::int64_t index[Shape::kMaxRank] = {};
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t offset = 0;
    for (int a = 0; a < rank; ++a) offset += index[a] * t.stride(a);
    visit(base + offset * size, flat);
    for (int a = rank - 1; a >= 0; --a) {
      if (++index[a] < t.dim(a)) break;
      index[a] = 0;
    }
  }
}

}  // namespace

NonFinite find_non_finite(const Tensor& t) {
  NonFinite out;
  if (t.empty() || t.numel() == 0) return out;
  const auto* base = static_cast<const std::byte*>(t.data());
  if (t.dtype() == DType::f32) scan<F32Bits>(base, t, out);
  if (t.dtype() == DType::bf16) scan<Bf16Bits>(base, t, out);
  return out;
}

std::string describe(const NonFinite& n, const Shape& shape) {
  if (n.count == 0) return {};
  Shape index = shape;
  std::int64_t rest = n.first;
  for (int a = shape.rank() - 1; a >= 0; --a) {
    index[a] = shape[a] > 0 ? rest % shape[a] : 0;
    rest = shape[a] > 0 ? rest / shape[a] : 0;
  }
  return std::to_string(n.count) + " non-finite value" + (n.count == 1 ? "" : "s") + " (" +
         std::to_string(n.nan) + " NaN, " + std::to_string(n.count - n.nan) +
         " Inf), the first at " + index.str();
}

}  // namespace cpufold
