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
#include "memory/buffer_list.h"
#include "memory/chunk_sizes.h"

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

// The bytes one forward() takes, phase by phase (see Trunk::forward).
struct TrunkBytes {
  std::size_t scratch = 0;      // ctx.arena()'s peak (with the activations when they share it)
  std::size_t activations = 0;  // the activation arena's peak when apart: templates, extra MSA, MSA
  std::size_t retained = 0;     // ctx.arena() bytes left allocated after forward()
};

class Trunk {
 public:
  // stacks: the compute precision of the template, extra-MSA and Evoformer stacks' Linears
  // (bf16 as AF2 runs its trunk), and the extra-MSA representation's element type; the
  // embedders and the single projection stay in root's precision (f32). root: the parameters'
  // root scope with the model's weight cache (a WeightStore converts to one without).
  Trunk(const ParamScope& root, const ModelConfig& config, DType stacks = DType::f32);
  ~Trunk();

  const ModelConfig& config() const { return config_; }

  // Allocates a zeroed TrunkState (the first iteration's recycled inputs are zeros, as in AF2)
  // from `arena`, all but `msa`, which forward() allocates.
  TrunkState allocate_state(const TrunkDims& dims, Arena& arena) const;
  // Bytes allocate_state takes.
  std::size_t state_bytes(const TrunkDims& dims) const;
  // What one forward() takes for these sizes and chunks (the templates', extra-MSA and
  // Evoformer families'; the embedders take the Evoformer's), with the activations in their own
  // arena (`activations_apart`) or sharing ctx.arena().
  // `tracing`: with a tracer (ctx.tracer), which gives the embedders' pair outputs buffers of
  // their own (N²·c_z each).
  TrunkBytes forward_bytes(const TrunkDims& dims, const ChunkSizes& chunks, bool activations_apart,
                           bool tracing = false) const;
  // Bytes of the MSA representation forward() leaves in the activation arena.
  std::size_t msa_bytes(const TrunkDims& dims) const;
  // Bytes of the extra-MSA representation, which lives during the extra-MSA stack.
  std::size_t extra_msa_bytes(const TrunkDims& dims) const;
  // The DRAM a spilled run's staged passes (memory/spill_window.h) hold at once: over the MSA
  // or extra-MSA representation (spilled activations; a pass and the outer product mean's
  // concurrent row pass) and over the pair representation (spilled outputs).
  std::size_t msa_window_bytes(const TrunkDims& dims, const ChunkSizes& chunks) const;
  std::size_t pair_window_bytes(const TrunkDims& dims, const ChunkSizes& chunks) const;
  // Bytes one iteration moves to and from the spill tier with the activations spilled (the
  // templates' pair activations, the MSA representations, the triangle edges), and with the
  // pair representation too (pair_spilled): EvoformerBlock::spill_traffic_bytes over the
  // stacks, and each template pair block reading and writing the templates' pair activations
  // once per module (five).
  std::size_t spill_traffic_bytes(const TrunkDims& dims, const ChunkSizes& chunks,
                                  bool pair_spilled, std::size_t cache_bytes) const;

  // One iteration: reads state.msa_first_row / pair / prev_pseudo_beta as the recycled inputs,
  // and overwrites msa_first_row, pair, single with this iteration's results. The big
  // activations live one after the other: the extra-MSA representation only during the
  // extra-MSA stack, then the MSA representation, which is computed only after it (it does not
  // depend on the pair) and which forward() leaves allocated as state.msa from
  // ctx.activation_arena(), with the masks in ctx.arena(): the caller releases both (arena
  // marks) before the next forward(). Traces every module (reference names) when ctx.tracer is
  // set. Each stack slices with its family's chunk; ctx.chunk is not read.
  void forward(const TrunkInputs& in, TrunkState& state, const RunContext& ctx,
               const ChunkSizes& chunks) const;

  static TrunkDims dims_of(const TrunkInputs& in, const ModelConfig& config);

  // Block 0 of the extra-MSA or the Evoformer stack (run alone by `profile --blocks-only`).
  const EvoformerBlock& first_block(EvoformerBlock::Kind kind) const;

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them.
  struct Masks {
    Tensor msa_mask;       // [n_seq + n_templ, n_res]: the cluster rows', then the templates'
    Tensor pair_mask;      // [n_res, n_res]
    Tensor template_rows;  // with templates: their MSA rows [n_templ, n_res, c_m], until the MSA
  };
  struct ExtraMsa {
    Tensor e;  // the extra-MSA representation [n_extra, n_res, c_e] in the stacks' precision
  };
  struct TracedPair {
    Tensor z;  // with a tracer: the input embedder's pair output on its own [n_res, n_res, c_z]
  };
  // TrunkState's members but msa (allocate_state) and msa alone (forward).
  BufferList<TrunkState> state_buffers(const TrunkDims& d) const;
  BufferList<TrunkState> msa_buffers(const TrunkDims& d) const;
  BufferList<Masks> mask_buffers(const TrunkDims& d) const;
  BufferList<ExtraMsa> extra_msa_buffers(const TrunkDims& d) const;
  BufferList<TracedPair> traced_pair_buffers(std::int64_t n_res) const;

  // The phases of forward(), in order: the recycled inputs and the pair half of the input
  // embedding into state; the extra-MSA stack over the pair; the MSA half of the input embedding
  // (with the template rows) as state.msa; the Evoformer stack.
  void embed_pair(const TrunkInputs& in, TrunkState& state, const RunContext& ctx) const;
  void run_extra_msa_stack(const TrunkInputs& in, TrunkState& state, const Tensor& pair_mask,
                           const RunContext& ctx, std::int64_t chunk) const;
  void embed_msa(const TrunkInputs& in, TrunkState& state, const Tensor& template_rows,
                 const RunContext& ctx) const;
  void run_evoformer_stack(TrunkState& state, const Tensor& msa_mask, const Tensor& pair_mask,
                           const RunContext& ctx) const;

  ModelConfig config_;
  // The extra-MSA representation's element type: the stacks' precision (a bf16 trunk stores it
  // in bf16, as AF2 does, half the bytes of the largest activation at AF2's 5,120 rows).
  DType extra_type_;
  InputEmbedder input_embedder_;
  RecyclingEmbedder recycling_embedder_;
  std::unique_ptr<TemplateEmbedder> template_embedder_;  // null without templates
  ExtraMsaEmbedder extra_msa_embedder_;
  std::vector<EvoformerBlock> extra_msa_stack_;
  std::vector<EvoformerBlock> evoformer_stack_;
  Linear single_activations_;  // [c_m] -> [c_s]
};

}  // namespace cpufold
