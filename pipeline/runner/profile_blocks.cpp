#include "pipeline/runner/profile_blocks.h"

#include <string_view>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/peak_tracker.h"
#include "memory/system_memory.h"
#include "pipeline/runner/block_bench.h"

namespace cpufold {
namespace {

EvoformerBlock::Kind kind_of(const ProfiledBlock& b) {
  return std::string_view(b.name) == "extra_msa" ? EvoformerBlock::Kind::extra_msa
                                                 : EvoformerBlock::Kind::evoformer;
}

BlockShape shape_of(const ModelRunner& runner, const ProfiledBlock& b, std::int64_t n_res) {
  return {kind_of(b), runner.precision(), b.n_seq, n_res, b.chunk, /*msa_apart=*/false};
}

// BudgetError unless the block's predicted peak fits `budget`, or without one the memory
// available (what is free now and what this process holds already, as the planner counts it).
void refuse_unless_fits(const ProfiledBlock& b, std::int64_t n_res,
                        std::optional<std::size_t> budget) {
  std::size_t limit = 0;
  std::string what;
  if (budget) {
    limit = *budget;
    what = "the memory budget " + format_bytes(*budget);
  } else if (const std::size_t usable = usable_memory_bytes(); usable > 0) {
    limit = usable + os_current_rss_bytes();
    what = "the memory available here " + format_bytes(limit);
  }
  if (limit == 0 || b.predicted.total() <= limit) return;
  throw BudgetError("the " + profile_block_title(b.name) + " at N_res " + std::to_string(n_res) +
                    " (" + std::to_string(b.n_seq) + " rows, chunk " + std::to_string(b.chunk) +
                    ") needs " + format_bytes(b.predicted.total()) + " (weights and process " +
                    format_bytes(b.predicted.resident) + ", activations " +
                    format_bytes(b.predicted.activations) + ", scratch " +
                    format_bytes(b.predicted.scratch) + "), more than " + what +
                    "; profile shorter lengths here, or this one on a machine with more memory");
}

}  // namespace

std::vector<ProfiledBlock> plan_profile_blocks(const ModelRunner& runner, const ProfileSizes& z,
                                               const ChunkSizes& chunks) {
  // The planner's own figures for what a run holds besides its arenas.
  const std::size_t resident = process_bytes(runner.config()) + runner.weight_bytes();
  std::vector<ProfiledBlock> blocks;
  for (const char* name : kProfileBlocks) {
    ProfiledBlock b;
    b.name = name;
    const bool extra = b.name == "extra_msa";
    // The Evoformer's MSA has the template rows below the cluster rows (Trunk::forward).
    b.n_seq = extra ? z.extra_rows : z.msa_rows + z.templates;
    b.chunk = extra ? chunks.extra_msa : chunks.evoformer;
    const BlockShape shape = shape_of(runner, b, z.n_res);
    b.predicted = predict_block_peak(runner.trunk().first_block(shape.kind), runner.config(), shape,
                                     resident);
    blocks.push_back(std::move(b));
  }
  return blocks;
}

void run_profile_blocks(const ModelRunner& runner, std::int64_t n_res,
                        std::vector<ProfiledBlock>& blocks, std::optional<std::size_t> budget,
                        StageMeter& meter, const std::function<void(const ProfiledBlock&)>& done) {
  for (ProfiledBlock& b : blocks) {
    refuse_unless_fits(b, n_res, budget);
    const BlockShape shape = shape_of(runner, b, n_res);
    meter.begin(profile_block_stage(b.name));
    {
      // The model's own block 0: its weights are the ones the model maps, already resident.
      BlockBench bench(runner.trunk().first_block(shape.kind), runner.config(), shape.kind,
                       shape.precision, shape.n_seq, shape.n_res, dram_tier(), dram_tier());
      b.seconds = bench.run(shape.chunk);
    }
    meter.end();
    b.measured_peak_bytes = meter.stages().back().peak_bytes;
    b.ran = true;
    if (done) done(b);
  }
}

}  // namespace cpufold
