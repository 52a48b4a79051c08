// When recycling may stop early: ColabFold's measure of how much the structure still moves.
#pragma once

#include "memory/tensor.h"

namespace cpufold {

// RMS change (Å) of the CA-CA distance matrix between two iterations: ca_prev [n_res, 3], the
// previous iteration's CA positions, and atom37 [n_res, 37, 3], this one's atoms. Invariant to
// the frame the structure happens to be built in.
double ca_distance_change(const Tensor& ca_prev, const Tensor& atom37);

// The CA positions [n_res, 3] of atom37 [n_res, 37, 3], into ca.
void copy_ca(const Tensor& atom37, const Tensor& ca);

}  // namespace cpufold
