#include "ops/tensor_checks.h"

#include <string>

#include "memory/error.h"

namespace cpufold::detail {

void check_f32(const Tensor& t, const Shape& dims, const char* what) {
  if (t.dtype() != DType::f32 || !(t.shape() == dims) ||
      (t.rank() > 0 && t.dim(-1) > 1 && t.stride(-1) != 1)) {
    throw InternalError(std::string(what) + " must be f32" + dims.str() +
                        " with a unit-stride last axis, got " + t.describe() + " strides " +
                        t.strides().str());
  }
}

void check_activation(const Tensor& t, const Shape& dims, const char* what) {
  if ((t.dtype() != DType::f32 && t.dtype() != DType::bf16) || !(t.shape() == dims) ||
      (t.rank() > 0 && t.dim(-1) > 1 && t.stride(-1) != 1)) {
    throw InternalError(std::string(what) + " must be f32 or bf16" + dims.str() +
                        " with a unit-stride last axis, got " + t.describe() + " strides " +
                        t.strides().str());
  }
}

}  // namespace cpufold::detail
