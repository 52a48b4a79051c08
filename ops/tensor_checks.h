// Checks of the tensors a module is handed, before its loops index them raw.
#pragma once

#include "memory/tensor.h"

namespace cpufold::detail {

// Throws InternalError naming `what` unless t is f32 with shape `dims` and a unit-stride last axis.
void check_f32(const Tensor& t, const Shape& dims, const char* what);
// The same for a stored representation, which may be f32 or bf16 (a bf16 trunk's extra MSA).
void check_activation(const Tensor& t, const Shape& dims, const char* what);

}  // namespace cpufold::detail
