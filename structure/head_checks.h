// Argument checks shared by the output heads: a wrong shape is a caller bug (InternalError).
#pragma once

#include <string>

#include "memory/error.h"
#include "memory/tensor.h"

namespace cpufold::detail {

// Throws InternalError naming `head` and `what` unless `t` is an f32 tensor of shape `shape`.
inline void require_head_tensor(const Tensor& t, const Shape& shape, const char* head,
                                const char* what) {
  if (t.empty() || t.dtype() != DType::f32 || !(t.shape() == shape)) {
    throw InternalError(std::string(head) + ": " + what + " must be f32" + shape.str() + ", got " +
                        (t.empty() ? std::string("none") : t.describe()));
  }
}

}  // namespace cpufold::detail
