// `cpufold bench block`: one Evoformer or extra-MSA block on random activations, timed, with
// its memory; with --spill-dir the activations live in the spill tier, as a spilled run keeps
// them, so that a block too large for DRAM can be measured under a cgroup limit.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "memory/file_tier.h"
#include "memory/peak_tracker.h"
#include "ops/compute_precision.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/runner/block_bench.h"
#include "pipeline/runner/block_peak.h"
#include "pipeline/runner/model_flops.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/run_plan.h"
#include "pipeline/runner/stage_meter.h"

namespace cpufold {
namespace {

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

struct BlockArgs {
  std::string stack = "evoformer";
  std::int64_t n_res = 128;
  std::optional<std::int64_t> msa_rows;  // empty: 512 (Evoformer) or 5120 (extra MSA)
  int repeat = 1, warmups = 1;
  CommonOptions common;
};

void run_block_bench(BlockArgs& args) {
  resolve_common_options(args.common);
  // A benchmark: unsliced unless told.
  const std::int64_t chunk = args.common.run.uniform_chunk().value_or(0);
  ModelWeights weights = open_model_weights(args.common.params);
  const WeightStore& store = weights.store;
  const ModelConfig& c = weights.config;
  const bool extra = args.stack == "extra-msa";
  const DType precision = args.common.run.precision;
  const std::int64_t s = args.msa_rows.value_or(extra ? 5120 : 512), n = args.n_res;

  // With a spill directory the block's input and output activations live there, as in a
  // spilled run: each block reads them back from the file slab by slab.
  std::unique_ptr<FileTier> spill;
  if (args.common.run.spill_dir) spill = std::make_unique<FileTier>(*args.common.run.spill_dir);
  Tier& state_tier = spill ? static_cast<Tier&>(*spill) : dram_tier();
  const EvoformerBlock::Kind kind =
      extra ? EvoformerBlock::Kind::extra_msa : EvoformerBlock::Kind::evoformer;
  const EvoformerBlock block = make_bench_block(store, c, kind, precision);
  // A pass over m that is alone may take what a spilled run's plan counts for this block's
  // passes over m (FileTier::set_window_bytes).
  if (spill) {
    spill->set_window_bytes(block.spill_window_bytes(s, n, chunk, block_msa_type(kind, precision)));
  }
  // The block holds copies of its weights: the file's values leave memory, and what stays is
  // what the block's peak is predicted on top of.
  weights.store.release_values();
  const std::size_t resident = os_current_rss_bytes();
  StageMeter meter;  // the peak from here on: the block's inputs, its runs and their set-up
  meter.begin("block");
  BlockBench bench(block, c, kind, precision, s, n, state_tier, state_tier);
  const char* name = extra ? "extra-MSA" : "evoformer";
  std::printf("%s block: n_res %lld, %s rows %lld, chunk %lld, threads %d: %d warm-up run(s)\n",
              name, static_cast<long long>(n), extra ? "extra" : "MSA", static_cast<long long>(s),
              static_cast<long long>(chunk), omp_get_max_threads(), args.warmups);
  std::fflush(stdout);
  for (int w = 0; w < args.warmups; ++w) bench.run(chunk);  // primitives are created here
  bench.reset_module_seconds();
  double total = 0;
  for (int r = 0; r < args.repeat; ++r) total += bench.run(chunk);
  const double secs = total / args.repeat;
  meter.end();
  const BlockPeak predicted = predict_block_peak(block, c, bench.shape(chunk), resident);
  const double flops =
      extra ? extra_msa_block_flops(c, static_cast<double>(s), static_cast<double>(n))
            : evoformer_block_flops(c, static_cast<double>(s), static_cast<double>(n));
  const double gflop = flops / 1e9;
  std::printf(
      "%s block: n_res %lld, %s rows %lld, c_m %lld, c_z %lld, chunk %lld, threads %d, "
      "precision %s, oneDNN ISA %s\n"
      "  time %.3f s per block, %.1f GFLOP, %.1f GFLOP/s\n"
      "  activations %.1f MiB (%s), scratch planned %.1f MiB (high water %.1f MiB)\n"
      "  %s\n",
      name, static_cast<long long>(n), extra ? "extra" : "MSA", static_cast<long long>(s),
      static_cast<long long>(extra ? c.c_e : c.c_m), static_cast<long long>(c.c_z),
      static_cast<long long>(chunk), omp_get_max_threads(), precision_name(precision),
      bf16_support().isa.c_str(), secs, gflop, gflop / secs, mib(bench.activation_bytes()),
      state_tier.name().c_str(), mib(bench.last_scratch_bytes()),
      mib(bench.last_scratch_high_water()), block_peak_line(meter.peak_bytes(), predicted).c_str());
  const std::vector<ModuleFlops> module_flops =
      extra ? extra_msa_block_module_flops(c, static_cast<double>(s), static_cast<double>(n))
            : evoformer_block_module_flops(c, static_cast<double>(s), static_cast<double>(n));
  std::printf("  per module (s per block, share of the block, GFLOP/s):\n");
  for (const BlockBench::ModuleTime& m : bench.module_seconds()) {
    const double t = m.seconds / args.repeat;
    std::printf("    %-34s %9.3f s %5.1f%%", m.module.c_str(), t, 100 * t / secs);
    for (const ModuleFlops& f : module_flops) {
      if (f.module == m.module && t > 0) std::printf(" %7.1f GFLOP/s", f.flops / 1e9 / t);
    }
    std::printf("\n");
  }
  if (spill) {
    std::printf(
        "  peak RSS counts the spill file's pages while they were mapped; the DRAM a cgroup "
        "must grant is what ../shared/tools/memlimit reports\n");
  }
}

void add_block_options(CLI::App& cmd, BlockArgs& args) {
  cmd.add_option("--stack", args.stack,
                 "which block: evoformer (block 0 of the Evoformer stack, Alg. 6) or extra-msa "
                 "(block 0 of the extra-MSA stack, Alg. 18) (default evoformer)")
      ->check(CLI::IsMember({"evoformer", "extra-msa"}));
  cmd.add_option("--n-res", args.n_res, "residues (default 128)")
      ->transform(integer_in(1, kMaxResidues));
  cmd.add_option("--msa-rows", args.msa_rows,
                 "MSA rows (default 512; 5120 extra rows with --stack extra-msa)")
      ->transform(integer_in(1, kMaxRows));
  cmd.add_option("--repeat", args.repeat, "timed repetitions after the warm-up (default 1)")
      ->transform(integer_in(1, kMaxRepeat));
  cmd.add_option("--warmups", args.warmups,
                 "untimed runs first, where oneDNN creates its primitives (default 1; 0 for "
                 "blocks of many minutes, where that set-up is negligible)")
      ->transform(integer_in(0, kMaxRepeat));
  add_hidden_alias(cmd, "--n-seq", "--msa-rows");
  add_common_options(cmd, args.common, Command::bench_block);
  // A block benchmark has no planner: unsliced unless told (large blocks need a chunk).
  cmd.get_option("--chunk-size")
      ->description(
          "rows per slice of every chunked loop: attention, outer product mean, triangle "
          "multiplication; bounds transient memory (default 0: no slicing, the fastest; at "
          "large n_res give the chunk `cpufold plan` chooses, e.g. 32)");
}

}  // namespace

void add_bench_block_command(CLI::App& bench) {
  auto args = std::make_shared<BlockArgs>();
  const char* help =
      "One Evoformer block (block 0 of PARAMS; --stack extra-msa: the first extra-MSA block) on "
      "random m [n_seq, n_res, c_m] and z [n_res, n_res, c_z] with all-ones masks; prints wall "
      "time, GFLOP/s and memory. With --spill-dir, m and z live in a file there and are written "
      "back after each block, and the triangle multiplications' right edges (c·N² each) are "
      "placed there too, as in a spilled run.";
  CLI::App* block = bench.add_subcommand("block", help);
  block->alias("evoformer-block");  // the name earlier notes and scripts use
  add_block_options(*block, *args);
  block->callback([args] { run_block_bench(*args); });
}

}  // namespace cpufold
