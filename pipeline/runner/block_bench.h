// One Evoformer or extra-MSA block on random activations, timed: what `cpufold bench block`
// prints and what `cpufold bench calibrate` measures the planner's time model with. The MSA
// and pair activations may live on other tiers (the spill tier), written back after each run
// as a spilled run does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evoformer/evoformer_block.h"
#include "memory/arena.h"
#include "ops/gemm.h"
#include "pipeline/runner/block_peak.h"
#include "pipeline/runner/module_clock.h"

namespace cpufold {

// Block 0 of the stack `kind` of `store`, its Linears private and computing in `precision`.
EvoformerBlock make_bench_block(const WeightStore& store, const ModelConfig& config,
                                EvoformerBlock::Kind kind, DType precision);

class BlockBench {
 public:
  // Random m [n_seq, n_res, c] (c_m, or c_e for the extra stack) on `msa_tier` and z
  // [n_res, n_res, c_z] on `pair_tier`, all-ones masks, for `block` (borrowed: a model's own,
  // or make_bench_block's; it must outlive the bench), which computes in `precision`. The arenas
  // are block_arena_bytes's. With the MSA on another tier than DRAM, the triangle
  // multiplications' right edges go there too, as in a spilled run.
  BlockBench(const EvoformerBlock& block, const ModelConfig& config, EvoformerBlock::Kind kind,
             DType precision, std::int64_t n_seq, std::int64_t n_res, Tier& msa_tier,
             Tier& pair_tier);
  // The same with make_bench_block(store, config, kind, precision), owned by the bench.
  BlockBench(const WeightStore& store, const ModelConfig& config, EvoformerBlock::Kind kind,
             DType precision, std::int64_t n_seq, std::int64_t n_res, Tier& msa_tier,
             Tier& pair_tier);

  // Runs the block once with `chunk` (scratch sized for it, kept mapped for the next run with the
  // same chunk) and returns the wall time; the spilled activations are written back and dropped
  // from memory afterwards.
  double run(std::int64_t chunk);

  // What run(chunk) runs, for block_arena_bytes and predict_block_peak.
  BlockShape shape(std::int64_t chunk) const;
  const EvoformerBlock& block() const { return block_; }

  std::size_t activation_bytes() const {
    return msa_.capacity() + pair_.capacity() + (edges_ ? edges_->capacity() : 0);
  }
  std::size_t last_scratch_bytes() const { return scratch_capacity_; }
  std::size_t last_scratch_high_water() const { return scratch_high_water_; }
  // Wall time of each module of the block (RunContext::module), summed over every run so far
  // (warm-ups included), in the order they ran; the spilled write-back after the block counts
  // as one ("spill write-back").
  using ModuleTime = ModuleClock::Entry;
  const std::vector<ModuleTime>& module_seconds() const { return modules_.entries(); }
  void reset_module_seconds() { modules_ = ModuleClock(); }

 private:
  // Runs `borrowed`, or when null `owned`.
  BlockBench(std::unique_ptr<const EvoformerBlock> owned, const EvoformerBlock* borrowed,
             const ModelConfig& config, EvoformerBlock::Kind kind, DType precision,
             std::int64_t n_seq, std::int64_t n_res, Tier& msa_tier, Tier& pair_tier);

  std::unique_ptr<const EvoformerBlock> owned_;  // null when the block is borrowed
  const EvoformerBlock& block_;
  ModelConfig config_;
  EvoformerBlock::Kind kind_;
  DType precision_;
  std::int64_t n_seq_, n_res_;
  bool msa_spilled_, pair_spilled_;  // before the arenas: shape() reads them
  BlockArenaBytes arena_bytes_;      // of shape(0): the MSA's and pair's arenas
  Tier& msa_tier_;
  Arena msa_, pair_;
  // On the MSA's tier when it is spilled, what the block puts apart (EvoformerBlock::
  // apart_bytes), sized for the chunk like the scratch.
  std::optional<Arena> edges_;
  std::optional<Arena> scratch_;  // kept while runs use the same chunk
  GemmCache gemm_;                // the block's product primitives, kept from run to run
  std::int64_t scratch_chunk_ = 0;
  Tensor m_, z_, msa_mask_, pair_mask_;
  std::size_t scratch_capacity_ = 0, scratch_high_water_ = 0;
  ModuleClock modules_;
};

}  // namespace cpufold
