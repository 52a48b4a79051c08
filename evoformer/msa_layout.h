// Layout helpers shared by the MSA-side modules: column gathers of an MSA-like [rows, cols, c]
// tensor into a contiguous transposed buffer and the matching scatter-add, a row-wise add, and
// mask -> additive attention bias.
#pragma once

#include <cstdint>

#include "memory/tensor.h"

namespace cpufold::detail {

// dst[j, s, :] = src[s, j0 + j, :] for j < dst.dim(0), s < src.dim(0).
// src: [n_row, n_col, c] f32 or bf16 (widened), unit-stride last axis; dst: [n_j, n_row, c]
// f32 contiguous.
void gather_columns(const Tensor& src, std::int64_t j0, const Tensor& dst);
// dst[j, s, :] += src[s, j0 + j, :]: gather_columns adding to dst (src f32 or bf16).
void gather_add_columns(const Tensor& src, std::int64_t j0, const Tensor& dst);

// dst[s, j0 + j, :] += src[j, s, :]. src: [n_j, n_row, c] f32 contiguous; dst: [n_row, n_col, c]
// f32 or bf16 (the sum rounded once), with a unit-stride last axis.
void add_columns(const Tensor& src, const Tensor& dst, std::int64_t j0);

// dst[s, j0 + j, :] = src[j, s, :] (rounded once to a bf16 dst); shapes as add_columns.
void set_columns(const Tensor& src, const Tensor& dst, std::int64_t j0);

// dst += src. src: f32 contiguous; dst: the same shape, f32 or bf16 (the sum rounded once), its
// leading axes collapsing into one row stride (a slice of rows of an MSA).
void add_rows(const Tensor& src, const Tensor& dst);

// dst = inf * (mask - 1) elementwise: 0 where mask is 1, -inf where it is 0 (AF2's attention
// mask bias). mask, dst: rank-2 f32 of equal shape, any strides (mask may be a transposed view).
void mask_to_bias(const Tensor& mask, float inf, const Tensor& dst);

}  // namespace cpufold::detail
