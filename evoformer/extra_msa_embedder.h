// AF2's extra-MSA embedding (supplement Alg. 2, the extra_msa_activations Linear before the
// extra-MSA stack).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory/buffer_list.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 2 (extra MSA embedding)
// e[s, i] = Linear(one_hot(extra_msa[s, i], 23) ‖ extra_has_deletion ‖ extra_deletion_value),
// OpenFold's build_extra_msa_feat order. The one-hot part is a row gather:
// e = (W[msa] + has_deletion·W[23] + deletion_value·W[24]) + b.
class ExtraMsaEmbedder {
 public:
  // scope: `evoformer` (extra_msa_activations [c_in, c_e], c_in = 25 = 23 classes + 2).
  ExtraMsaEmbedder(const ParamScope& scope, std::int64_t c_in, std::int64_t c_e);

  // extra_msa: [n_extra, n_res] (i64 or i32, values in [0, 23)), extra_has_deletion and
  // extra_deletion_value: [n_extra, n_res] f32 -> e: [n_extra, n_res, c_e], overwritten,
  // contiguous f32 or bf16 (rounded once).
  // Throws InputError for an out-of-range extra_msa entry. Scratch: scratch_bytes(...).
  // Traces `extra_msa_embedder/call_k/out`.
  void forward(const Tensor& extra_msa, const Tensor& extra_has_deletion,
               const Tensor& extra_deletion_value, const Tensor& e, const RunContext& ctx) const;

  // Only when extra_msa is not contiguous i64 (then it is copied).
  static std::size_t scratch_bytes(std::int64_t n_extra, std::int64_t n_res);

  std::int64_t c_e() const { return c_e_; }

 private:
  // forward()'s buffer, stated once in the list that both allocates and sizes it.
  struct Buffers {
    Tensor msa;  // extra_msa as contiguous i64 [n_extra, n_res], when it is not already
  };
  // copy: needs_index_copy(extra_msa), always when sizing.
  static BufferList<Buffers> buffers(std::int64_t n_extra, std::int64_t n_res, bool copy);

  std::int64_t n_classes_, c_e_;
  std::vector<float> w_;     // [n_classes + 2, c_e]
  std::vector<float> bias_;  // [c_e]
};

}  // namespace cpufold
