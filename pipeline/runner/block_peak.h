// The memory of one Evoformer or extra-MSA block run alone (BlockBench): the arenas it takes and
// the peak it is predicted to reach. `cpufold bench block` and `cpufold profile --blocks-only`
// both compare their measured peak with predict_block_peak, and BlockBench sizes its arenas with
// block_arena_bytes, so the prediction is of what runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "evoformer/evoformer_block.h"
#include "io/model_config.h"
#include "memory/dtype.h"

namespace cpufold {

// One block run: which block, at what sizes and chunk.
struct BlockShape {
  EvoformerBlock::Kind kind = EvoformerBlock::Kind::evoformer;
  DType precision = DType::f32;  // the block's compute precision
  std::int64_t n_seq = 0;        // MSA rows (extra rows for the extra-MSA block)
  std::int64_t n_res = 0;
  std::int64_t chunk = 0;  // rows per slice of the block's chunked loops; 0: unsliced
  bool msa_apart = false;  // the MSA on another tier: what the block puts apart goes there too
};

// The MSA's element type as the trunk stores it: a bf16 extra-MSA stack keeps it in bf16.
DType block_msa_type(EvoformerBlock::Kind kind, DType precision);

// The arenas BlockBench makes for `shape`, in bytes as Arena reserves them.
struct BlockArenaBytes {
  std::size_t msa = 0;      // m [n_seq, n_res, c_m or c_e] and its mask [n_seq, n_res]
  std::size_t pair = 0;     // z [n_res, n_res, c_z] and its mask [n_res, n_res]
  std::size_t edges = 0;    // EvoformerBlock::apart_bytes: right edges, the OPM's projection
  std::size_t scratch = 0;  // EvoformerBlock::scratch_bytes at the chunk
  std::size_t activations() const { return msa + pair + edges; }
};
BlockArenaBytes block_arena_bytes(const EvoformerBlock& block, const ModelConfig& config,
                                  const BlockShape& shape);

// A block's predicted peak resident memory and its parts.
struct BlockPeak {
  std::size_t resident = 0;     // held before the block: code, libraries, heap, weights
  std::size_t activations = 0;  // BlockArenaBytes::activations
  std::size_t scratch = 0;      // BlockArenaBytes::scratch
  std::size_t total() const { return resident + activations + scratch; }
};

// `resident_bytes` is the caller's: `bench block` measures it once the block is built, `profile`
// takes the memory planner's process and weights.
BlockPeak predict_block_peak(const EvoformerBlock& block, const ModelConfig& config,
                             const BlockShape& shape, std::size_t resident_bytes);

// "Peak: 7634.0 MiB RSS against 7600.0 MiB predicted (22.0 MiB resident + 4331.0 MiB of
// activations + 3247.0 MiB of planned scratch), ratio 1.004"
std::string block_peak_line(std::size_t measured_bytes, const BlockPeak& predicted);

}  // namespace cpufold
