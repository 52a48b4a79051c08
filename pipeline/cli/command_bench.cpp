// `cpufold bench`: timed runs of model pieces on random inputs, for the numbers in notes and
// docs (speed is measured here, never asserted in tests).
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>

#include "evoformer/evoformer_block.h"
#include "io/model_config.h"
#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/peak_tracker.h"
#include "memory/system_memory.h"
#include "ops/compute_precision.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/runner/model_flops.h"
#include "pipeline/runner/wall_clock.h"

namespace cpufold {
namespace {

// A random MSA of `rows` x `n_res` (query first): 20% gaps, one deletion in 50 columns.
Msa random_msa(std::int64_t rows, std::int64_t n_res, std::uint32_t seed) {
  static constexpr char kLetters[] = "ACDEFGHIKLMNPQRSTVWY";
  std::mt19937 rng(seed);
  Msa msa;
  std::string query(static_cast<std::size_t>(n_res), 'A');
  for (char& c : query) c = kLetters[rng() % 20];
  for (std::int64_t r = 0; r < rows; ++r) {
    std::string row = query;
    std::vector<std::int32_t> deletions(static_cast<std::size_t>(n_res), 0);
    if (r > 0) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        const std::uint32_t u = rng() % 100;
        if (u < 20)
          row[i] = '-';
        else if (u < 60)
          row[i] = kLetters[rng() % 20];
        if (rng() % 50 == 0) deletions[i] = static_cast<std::int32_t>(1 + rng() % 5);
      }
    }
    msa.sequences.push_back(std::move(row));
    msa.deletions.push_back(std::move(deletions));
    msa.descriptions.push_back("row" + std::to_string(r));
  }
  return msa;
}

// Bytes per MSA cell bench features holds at once before its arena: the random MSA (a letter
// and an int deletion count), its raw features (two ints) and the pipeline's AF2-ordered copy
// (one byte), plus deduplication's row copies.
constexpr std::size_t kFeatureBytesPerCell = 16;

// BudgetError before anything is allocated when `bytes` exceed what this process can use, as
// the model commands refuse a plan up front instead of growing until the kernel kills them.
void require_memory(std::size_t bytes, const std::string& what) {
  const std::size_t usable = usable_memory_bytes();
  if (usable == 0 || bytes <= usable) return;
  throw BudgetError("bench features needs about " + format_bytes(bytes) + " for " + what +
                    ", more than the " + format_bytes(usable) +
                    " this process can use (MemAvailable or the cgroup's limit); pass a smaller "
                    "--n-res or --msa-rows");
}

void add_bench_features(CLI::App& bench) {
  struct Args {
    std::int64_t n_res = 1000, msa_rows = 10000;
    std::string model = "model_1";
    int repeat = 2;
    CommonOptions common;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = bench.add_subcommand(
      "features",
      "The AF2 feature pipeline on a random MSA: raw features (deduplication) once, then "
      "one recycling iteration's sampling, masking, clustering and msa_feat per repetition.");
  cmd->add_option("--n-res", args->n_res, "residues (default 1000)")
      ->transform(integer_in(1, kMaxRows));
  cmd->add_option("--msa-rows", args->msa_rows, "MSA rows, query included (default 10000)")
      ->transform(integer_in(1, kMaxRows));
  add_hidden_alias(*cmd, "--n-msa", "--msa-rows");
  cmd->add_option("--model", args->model, "AF2 model whose sizes are used (default model_1)");
  cmd->add_option("--repeat", args->repeat, "iterations timed (default 2)")
      ->transform(integer_in(1, kMaxRepeat));
  add_common_options(*cmd, args->common, Command::bench_features);
  cmd->callback([args] {
    resolve_common_options(args->common);
    const auto cells =
        static_cast<std::size_t>(args->msa_rows) * static_cast<std::size_t>(args->n_res);
    require_memory(cells * kFeatureBytesPerCell,
                   "a random MSA of " + std::to_string(args->msa_rows) + " rows x " +
                       std::to_string(args->n_res) + " residues and its features");
    const std::vector<Msa> msas{random_msa(args->msa_rows, args->n_res, 7)};
    const std::vector<std::string> names{"random"};
    auto t0 = std::chrono::steady_clock::now();
    const RawFeatures raw = make_raw_features(msas[0].sequences[0], msas, names);
    const double raw_secs = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const FeaturePipeline pipeline(raw, af2_feature_config(args->model));
    const double setup_secs = seconds_since(t0);
    require_memory(pipeline.bytes_per_iteration(), "one iteration's processed features");
    Arena arena("bench-features", dram_tier(), pipeline.bytes_per_iteration());
    t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < args->repeat; ++k) {
      ArenaScope scope(arena);
      RandomFeatureSampler sampler(0, k);
      pipeline.process(sampler, arena);
    }
    const double iter_secs = seconds_since(t0) / args->repeat;
    std::printf(
        "features (%s sizes): n_res %lld, MSA rows %lld -> %lld clusters + %lld extra, threads %d\n"
        "  raw features (dedup, HHblits ids) %.3f s; pipeline set-up (per model run: copy, AF2 "
        "order, profile) %.3f s; one iteration %.3f s\n"
        "  arena per iteration %.1f MiB, peak RSS %.1f MiB\n",
        args->model.c_str(), static_cast<long long>(args->n_res),
        static_cast<long long>(args->msa_rows), static_cast<long long>(pipeline.n_seq()),
        static_cast<long long>(pipeline.n_extra()), omp_get_max_threads(), raw_secs, setup_secs,
        iter_secs, static_cast<double>(pipeline.bytes_per_iteration()) / (1 << 20),
        static_cast<double>(os_peak_rss_bytes()) / (1 << 20));
  });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Timed runs of model pieces on random inputs.");
  bench->require_subcommand(1);
  add_bench_block_command(*bench);
  add_bench_calibrate_command(*bench);
  add_bench_features(*bench);
  add_bench_model_command(*bench);
}

}  // namespace cpufold
