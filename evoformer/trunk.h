// The AF2 trunk for one recycling iteration (AF2 Alg. 2 lines 1-14): embedders, recycling
// embedder, templates, extra-MSA stack, Evoformer stack and the single projection.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "evoformer/evoformer_block.h"
#include "evoformer/extra_msa_embedder.h"
#include "evoformer/input_embedder.h"
#include "evoformer/recycling_embedder.h"
#include "evoformer/trunk_inputs.h"
#include "io/model_config.h"

namespace cpufold {

class TemplateEmbedder;

// The representations one iteration produces; `pair` and `msa_first_row` are also the
// recycled inputs of the next iteration, so they persist across iterations.
struct TrunkState {
  Tensor msa;               // [n_seq + n_templ, n_res, c_m]: cluster rows, then template rows
  Tensor msa_first_row;     // [n_res, c_m]: previous iteration's first MSA row, then this one's
  Tensor pair;              // [n_res, n_res, c_z]: previous pair, then this iteration's
  Tensor single;            // [n_res, c_s]
  Tensor prev_pseudo_beta;  // [n_res, 3]: the previous iteration's positions (zeros at first)
};

struct TrunkDims {
  std::int64_t n_res, n_seq, n_extra, n_templ;
};

class Trunk {
 public:
  // stacks: the compute precision of the template, extra-MSA and Evoformer stacks' Linears
  // (bf16 as AF2 runs its trunk); the embedders and the single projection stay f32.
  Trunk(const WeightStore& store, const ModelConfig& config, DType stacks = DType::f32);
  ~Trunk();

  const ModelConfig& config() const { return config_; }

  // Allocates a zeroed TrunkState (the first iteration's recycled inputs are zeros, as in AF2)
  // from `arena`.
  TrunkState allocate_state(const TrunkDims& dims, Arena& arena) const;
  // Bytes allocate_state takes.
  std::size_t state_bytes(const TrunkDims& dims) const;
  // Scratch bytes one forward() takes for these sizes and chunk: the largest of its phases
  // (embedders; then with the masks the template stack, the extra-MSA stack with its
  // activations, the Evoformer stack).
  std::size_t scratch_bytes(const TrunkDims& dims, std::int64_t chunk) const;

  // One iteration: reads state.msa_first_row / pair / prev_pseudo_beta as the recycled inputs,
  // and overwrites state.msa, msa_first_row, pair, single with this iteration's results.
  // Traces every module (reference names) when ctx.tracer is set.
  void forward(const TrunkInputs& in, TrunkState& state, const RunContext& ctx) const;

  static TrunkDims dims_of(const TrunkInputs& in, const ModelConfig& config);

 private:
  ModelConfig config_;
  InputEmbedder input_embedder_;
  RecyclingEmbedder recycling_embedder_;
  std::unique_ptr<TemplateEmbedder> template_embedder_;  // null without templates
  ExtraMsaEmbedder extra_msa_embedder_;
  std::vector<EvoformerBlock> extra_msa_stack_;
  std::vector<EvoformerBlock> evoformer_stack_;
  Linear single_activations_;  // [c_m] -> [c_s]
};

}  // namespace cpufold
