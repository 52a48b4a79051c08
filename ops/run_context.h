// What every module's forward() needs besides its inputs: scratch memory, the slice size for
// attention-like loops, and the optional trace hook.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "memory/arena.h"
#include "memory/tensor.h"

namespace cpufold {

class GemmCache;

// Receives named intermediates (`<module>/call_<k>/<name>`, the reference's trace/ layout).
class Tracer {
 public:
  virtual ~Tracer() = default;
  virtual void record(const std::string& name, const Tensor& value) = 0;
};

// chunk: the slice size of every chunked loop, which bounds a module's transients
// (scratch_bytes(..., chunk)); <= 0: unchunked (all rows at once, the fastest). Per family:
//   attention, transitions, template pointwise attention, IPA: batch (query) rows per slice;
//   MSA column attention: a power of two of columns making at most about chunk·n_res rows
//     (detail::chunk_columns);
//   outer product mean: square blocks of residues i by j of about chunk·n_res pairs, slabs of
//     residues i in turn where the right projection is kept, else tile pairs (OuterProductMean);
//   triangle multiplication: pair-matrix rows (outgoing) or columns (incoming) per slab,
//     clamped to [16, 64] (64 when unchunked) and raised to n_res/16 (at most 256) at large n_res;
//     its right edge over all pairs (c_hidden·n_res² floats) is needed whatever the chunk.
struct RunContext {
  Arena* scratch = nullptr;  // transients; a module releases what it takes before returning
  std::int64_t chunk = 0;    // see above
  Tracer* tracer = nullptr;  // null: tracing off
  int call = 0;              // recycling iteration, the k of call_k in trace names
  // The large per-iteration activations (the templates' pair activations, the trunk's
  // extra-MSA and MSA representations, the heads' N²·bins outputs) when the plan puts them apart,
  // e.g. on the spill tier; null: they share `scratch`.
  Arena* activations = nullptr;
  // Told as each phase of the trunk begins ("embedders", "templates", "extra_msa",
  // "evoformer"; "embedders" again for the MSA half, after the extra-MSA stack), so a caller
  // can time them (`cpufold bench model`); null: nobody listens.
  const std::function<void(std::string_view)>* on_phase = nullptr;
  // The primitives of the attention tiles', triangle multiplication's and outer product mean's
  // products (ops/gemm.h), owned by whoever runs the model so that they outlive one module's
  // call; null: each such call makes its own (tests).
  GemmCache* gemm = nullptr;
  // Told as each module of a block begins ("msa_row_attention", ..., "pair_transition") and
  // with "" when the block ends, so a caller can time them (`cpufold bench block` prints each);
  // null: nobody listens.
  const std::function<void(std::string_view)>* on_module = nullptr;

  Arena& arena() const { return *scratch; }
  Arena& activation_arena() const { return activations != nullptr ? *activations : *scratch; }
  void phase(std::string_view name) const {
    if (on_phase != nullptr && *on_phase) (*on_phase)(name);
  }
  void module(std::string_view name) const {
    if (on_module != nullptr && *on_module) (*on_module)(name);
  }
  // Records `value` as `<module>/call_<call>/<name>` when tracing is on.
  void trace(const std::string& module, const std::string& name, const Tensor& value) const {
    if (tracer) tracer->record(module + "/call_" + std::to_string(call) + "/" + name, value);
  }
};

}  // namespace cpufold
