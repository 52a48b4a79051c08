// Softmax over the last axis, in place.
#pragma once

#include "memory/tensor.h"

namespace cpufold {

// x: [..., n]. Numerically stable (the row max is subtracted first); large negative entries
// such as AF2's -1e9 mask bias get probability exactly 0; a fully masked row becomes uniform
// (as in AF2, whose masked logits are all equal).
void softmax_inplace(const Tensor& x);

}  // namespace cpufold
