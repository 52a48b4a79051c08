// `cpufold bench calibrate`: measures the planner's time model on this machine (how much
// slower one Evoformer block and one extra-MSA block run with each chunk size, and the
// Evoformer block with its activations spilled) and saves it where every later plan on this CPU
// model finds it.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>

#include "memory/file_tier.h"
#include "memory/peak_tracker.h"
#include "pipeline/cli/calibrate_instances.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/runner/block_bench.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/run_plan.h"
#include "pipeline/runner/time_model.h"

namespace cpufold {
namespace {

struct CalibrateArgs {
  std::string out;
  std::int64_t n_res = 256, msa_rows = 516, extra_rows = 5120;
  int rounds = 2;
  bool instances_only = false;
  CommonOptions common;
};

// The fastest of `rounds` runs: the least disturbed by other work on the machine.
double best_of(BlockBench& bench, std::int64_t chunk, int rounds) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < rounds; ++r) best = std::min(best, bench.run(chunk));
  return best;
}

// Each chunk the planner weighs for a block of this size (a chunk covering every sliced axis is
// the unsliced block again), timed; the times over the fastest's.
std::map<std::int64_t, double> chunk_factors(BlockBench& bench,
                                             const std::vector<std::int64_t>& chunks, int rounds) {
  bench.run(0);  // warm-up: oneDNN creates its primitives
  std::map<std::int64_t, double> seconds;
  for (const std::int64_t chunk : chunks) {
    seconds[chunk] = best_of(bench, chunk, rounds);
    std::printf("  chunk %4lld: %8.3f s\n", static_cast<long long>(chunk), seconds[chunk]);
    std::fflush(stdout);
  }
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& [chunk, s] : seconds) fastest = std::min(fastest, s);
  std::map<std::int64_t, double> factors;
  for (const auto& [chunk, s] : seconds) factors[chunk] = s / fastest;
  return factors;
}

// The Evoformer and extra-MSA blocks' relative time per chunk, into `model`.
void measure_chunk_factors(const CalibrateArgs& args, const ModelWeights& w, BlockBench& dram,
                           TimeModel& model) {
  const TrunkDims dims{args.n_res, args.msa_rows, args.extra_rows, 0};
  model.chunk_factor =
      chunk_factors(dram, family_chunks(ChunkFamily::evoformer, dims), args.rounds);
  std::printf("one extra-MSA block, %lld extra rows:\n", static_cast<long long>(args.extra_rows));
  std::fflush(stdout);
  BlockBench extra(w.store, w.config, EvoformerBlock::Kind::extra_msa, DType::f32, args.extra_rows,
                   args.n_res, dram_tier(), dram_tier());
  model.extra_msa_chunk_factor =
      chunk_factors(extra, family_chunks(ChunkFamily::extra_msa, dims), args.rounds);
}

// The chunk a default plan of the calibrated size takes: the leanest within the time slack.
std::int64_t default_chunk(const TimeModel& model) {
  std::int64_t chunk = 0;
  for (const auto& [c, f] : model.chunk_factor) {
    if (c > 0 && f <= 1 + kPlanTimeSlack && (chunk == 0 || c < chunk)) chunk = c;
  }
  return chunk;
}

// The Evoformer block with its activations, then also its outputs, in the spill tier under
// `dir`, against `dram`, at the chunk a default plan of this size takes (the leanest within
// the time slack): the spill factors of `model`, and its spill_bandwidth from the bytes one spilled
// block moves.
void measure_spill_factors(const CalibrateArgs& args, const ModelWeights& w, BlockBench& dram,
                           const std::filesystem::path& dir, TimeModel& model) {
  const std::int64_t chunk = default_chunk(model);
  const auto kind = EvoformerBlock::Kind::evoformer;
  FileTier tier(dir);
  BlockBench msa_spilled(w.store, w.config, kind, DType::f32, args.msa_rows, args.n_res, tier,
                         dram_tier());
  BlockBench both_spilled(w.store, w.config, kind, DType::f32, args.msa_rows, args.n_res, tier,
                          tier);
  const double in_dram = best_of(dram, chunk, args.rounds);
  const double msa = best_of(msa_spilled, chunk, args.rounds);
  const double both = best_of(both_spilled, chunk, args.rounds);
  model.spill_activations = std::max(1.0, msa / in_dram);
  model.spill_outputs = std::max(model.spill_activations, both / in_dram);
  // What a byte moved costs: the bytes one spilled block reads and writes (its staged passes
  // drop what they read, so the disk serves every read) over the time it adds.
  const DiskIo before = os_disk_io();
  const double once = msa_spilled.run(chunk);
  const DiskIo after = os_disk_io();
  const auto moved = static_cast<double>(after.read_bytes - before.read_bytes + after.write_bytes -
                                         before.write_bytes);
  if (moved > 0 && once > in_dram) model.spill_bandwidth = moved / (once - in_dram);
  std::printf(
      "  chunk %lld in %s: activations in DRAM %.3f s, MSA activations spilled %.3f s "
      "(%.2fx), MSA and pair spilled %.3f s (%.2fx); a spilled block moved %.0f MiB, each GB "
      "adding %.2f s (%.2f GB/s)\n",
      static_cast<long long>(chunk), tier.name().c_str(), in_dram, msa, model.spill_activations,
      both, model.spill_outputs, moved / (1 << 20), 1e9 / model.spill_bandwidth,
      model.spill_bandwidth / 1e9);
}

void save_and_report(const CalibrateArgs& args, const TimeModel& model) {
  const std::filesystem::path path =
      args.out.empty() ? time_model_path() : std::filesystem::path(args.out);
  if (path.empty()) {
    throw InputError(
        "no place for the time model: set HOME, XDG_CACHE_HOME or CPUFOLD_CACHE_DIR, "
        "or give --out FILE (and CPUFOLD_TIME_MODEL=FILE to runs)");
  }
  save_time_model(model, path);
  std::printf("relative time per chunk, Evoformer block:");
  for (const auto& [chunk, f] : model.chunk_factor)
    std::printf(" %lld: %.3f", static_cast<long long>(chunk), f);
  std::printf("\nrelative time per chunk, extra-MSA block:");
  for (const auto& [chunk, f] : model.extra_msa_chunk_factor)
    std::printf(" %lld: %.3f", static_cast<long long>(chunk), f);
  const InstanceScaling& i = model.instances;
  std::printf(
      "\ninstances: %.1f GFLOP/s per thread (fp32), 2 threads %.2fx 1, one per core each %.2fx "
      "slower than alone, bf16 %.2fx fp32",
      i.gflops, i.two_thread_speedup, i.side_by_side, i.bf16_speedup);
  std::printf("\nsaved to %s: %s\n", path.c_str(),
              path == time_model_path() ? "plans on this CPU model and ISA use it from now on"
                                        : "plans use it when CPUFOLD_TIME_MODEL names that file");
}

void calibrate(CalibrateArgs& args) {
  resolve_common_options(args.common);
  if (args.instances_only) {
    TimeModel model = machine_time_model();  // the chunk and spill factors stay as they are
    model.cpu = this_cpu();
    model.isa = this_isa();
    std::printf("calibrating instances only on %s (oneDNN ISA %s); chunk factors from %s\n",
                model.cpu.c_str(), model.isa.c_str(), model.source.c_str());
    measure_instance_scaling(
        {args.common.params, args.n_res, args.msa_rows, default_chunk(model), args.rounds}, model);
    save_and_report(args, model);
    return;
  }
  const ModelWeights weights = open_model_weights(args.common.params);
  TimeModel model = builtin_time_model();
  model.cpu = this_cpu();
  model.isa = this_isa();
  model.threads = omp_get_max_threads();
  std::printf(
      "calibrating on %s (oneDNN ISA %s), %d threads, n_res %lld, fastest of %d run(s) per "
      "setting\none Evoformer block, %lld MSA rows:\n",
      model.cpu.c_str(), model.isa.c_str(), model.threads, static_cast<long long>(args.n_res),
      args.rounds, static_cast<long long>(args.msa_rows));
  std::fflush(stdout);

  BlockBench dram(weights.store, weights.config, EvoformerBlock::Kind::evoformer, DType::f32,
                  args.msa_rows, args.n_res, dram_tier(), dram_tier());
  measure_chunk_factors(args, weights, dram, model);
  if (args.common.run.spill_dir) {
    measure_spill_factors(args, weights, dram, *args.common.run.spill_dir, model);
  } else {
    std::printf(
        "  spill factors: the built-in estimates (%.2fx, %.2fx); give --spill-dir to "
        "measure them\n",
        model.spill_activations, model.spill_outputs);
  }
  measure_instance_scaling(
      {args.common.params, args.n_res, args.msa_rows, default_chunk(model), args.rounds}, model);
  save_and_report(args, model);
}

}  // namespace

void add_bench_calibrate_command(CLI::App& bench) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "calibrate",
      "Measures the memory planner's time model on this machine: one Evoformer block and one "
      "extra-MSA block (block 0 of PARAMS, random activations, fp32) at every chunk size the "
      "planner weighs, and with --spill-dir the Evoformer block with its activations in the spill "
      "tier, and the same block in pinned child processes alone on 1 and 2 threads and one per "
      "core at once (the rate and the slowdown of instances side by side that predict --instances "
      "auto and plan --node-cores use); saves the results where plans on this CPU model find them "
      "(default: "
      "time_model.json in $CPUFOLD_CACHE_DIR, $XDG_CACHE_HOME/cpufold or ~/.cache/cpufold; "
      "$CPUFOLD_TIME_MODEL names the file). Takes about 7 minutes at the default size on 2 "
      "cores.");
  cmd->add_option("--n-res", args->n_res, "residues of the timed block (default 256)")
      ->transform(integer_in(1, kMaxRows));
  cmd->add_option("--msa-rows", args->msa_rows,
                  "MSA rows of the timed block (default 516: 512 clusters and 4 templates)")
      ->transform(integer_in(1, kMaxRows));
  cmd->add_option("--extra-rows", args->extra_rows,
                  "extra MSA rows of the timed extra-MSA block (default 5120, as AF2 models 1, 3, "
                  "4)")
      ->transform(integer_in(1, kMaxRows));
  cmd->add_option("--rounds", args->rounds,
                  "runs per setting, the fastest kept (default 2; more on a busy machine)")
      ->transform(integer_in(1, kMaxRepeat));
  cmd->add_option("--out", args->out, "file to write (default: where plans look, see above)")
      ->check(output_file_option());
  cmd->add_flag("--instances-only", args->instances_only,
                "measure only the instances side by side (a few minutes), keeping this "
                "machine's chunk and spill factors");
  add_hidden_alias(*cmd, "--n-seq", "--msa-rows");
  add_hidden_alias(*cmd, "--n-extra", "--extra-rows");
  add_common_options(*cmd, args->common, Command::bench_calibrate);
  cmd->callback([args] { calibrate(*args); });
}

}  // namespace cpufold
