#include "pipeline/runner/recycle_stop.h"

#include <cmath>
#include <cstdint>

#include "memory/tensor_copy.h"

namespace cpufold {
namespace {

constexpr std::int64_t kAtom37Ca = 1;

}  // namespace

double ca_distance_change(const Tensor& ca_prev, const Tensor& atom37) {
  const std::int64_t n = atom37.dim(0);
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double d_now = 0, d_prev = 0;
      for (std::int64_t x = 0; x < 3; ++x) {
        const double a = atom37.at<float>({i, kAtom37Ca, x}) - atom37.at<float>({j, kAtom37Ca, x});
        const double b = ca_prev.at<float>({i, x}) - ca_prev.at<float>({j, x});
        d_now += a * a;
        d_prev += b * b;
      }
      const double diff = std::sqrt(d_now) - std::sqrt(d_prev);
      sum += diff * diff;
    }
  }
  return std::sqrt(sum / static_cast<double>(n * n));
}

void copy_ca(const Tensor& atom37, const Tensor& ca) {
  copy_tensor(atom37.select(1, kAtom37Ca), ca);
}

}  // namespace cpufold
