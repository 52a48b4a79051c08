#include "pipeline/runner/ensemble_buffers.h"

#include "memory/tensor_copy.h"

namespace cpufold {
namespace {

// Both contiguous f32 arena tensors of one shape.
void add(const Tensor& x, const Tensor& sum) {
  const float* a = x.data_as<float>();
  float* b = sum.data_as<float>();
  for (std::int64_t i = 0; i < sum.numel(); ++i) b[i] += a[i];
}

void divide(const Tensor& sum, float count, const Tensor& dst) {
  const float* a = sum.data_as<float>();
  float* b = dst.data_as<float>();
  for (std::int64_t i = 0; i < dst.numel(); ++i) b[i] = a[i] / count;
}

}  // namespace

BufferList<EnsembleBuffers> EnsembleBuffers::buffers(const TrunkDims& d, const ModelConfig& c) {
  using E = EnsembleBuffers;
  return {{&E::prev_first_row, DType::f32, Shape{d.n_res, c.c_m}},
          {&E::prev_pair, DType::f32, Shape{d.n_res, d.n_res, c.c_z}},
          {&E::first_row, DType::f32, Shape{d.n_res, c.c_m}},
          {&E::pair, DType::f32, Shape{d.n_res, d.n_res, c.c_z}},
          {&E::single, DType::f32, Shape{d.n_res, c.c_s}},
          {&E::msa, DType::f32, Shape{d.n_seq + d.n_templ, d.n_res, c.c_m}}};
}

void EnsembleBuffers::save_recycled(const TrunkState& s) const {
  copy_tensor(s.msa_first_row, prev_first_row);
  copy_tensor(s.pair, prev_pair);
}

void EnsembleBuffers::restore_recycled(TrunkState& s) const {
  copy_tensor(prev_first_row, s.msa_first_row);
  copy_tensor(prev_pair, s.pair);
}

void EnsembleBuffers::accumulate(const TrunkState& s, std::int64_t member) const {
  if (member == 0) {
    copy_tensor(s.msa_first_row, first_row);
    copy_tensor(s.pair, pair);
    copy_tensor(s.single, single);
    copy_tensor(s.msa, msa);
    return;
  }
  add(s.msa_first_row, first_row);
  add(s.pair, pair);
  add(s.single, single);
}

void EnsembleBuffers::average_into(TrunkState& s, std::int64_t members) const {
  const auto count = static_cast<float>(members);
  divide(first_row, count, s.msa_first_row);
  divide(pair, count, s.pair);
  divide(single, count, s.single);
  copy_tensor(msa, s.msa);
}

}  // namespace cpufold
