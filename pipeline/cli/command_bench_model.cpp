// `cpufold bench model`: the whole forward pass on random inputs of given sizes, timed per
// stage, with FLOPs counted from the configuration (pipeline/runner/model_flops.h) and the
// oneDNN fp32 matmul rate measured in the same run, so "% of peak" is a ratio of two
// measurements on this machine.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/atomic_file.h"
#include "memory/error.h"
#include "memory/peak_tracker.h"
#include "ops/compute_precision.h"
#include "ops/matmul_peak.h"
#include "pipeline/batch/chunk_sizes_json.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/runner/model_flops.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/module_clock.h"
#include "pipeline/runner/run_plan.h"
#include "pipeline/runner/synthetic_features.h"

namespace cpufold {
namespace {

// The stages reported, in run order; "features" (reading a random sample) has no FLOPs.
constexpr const char* kStages[] = {"features",  "embedders", "templates", "extra_msa",
                                   "evoformer", "structure", "heads"};

// Wall time per stage name: each begin() ends the stage before it.
class StageClock {
 public:
  void begin(std::string_view name) {
    end();
    current_ = std::string(name);
    started_ = std::chrono::steady_clock::now();
  }
  void end() {
    if (current_.empty()) return;
    seconds_[current_] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    current_.clear();
  }
  double seconds(const std::string& name) const {
    const auto it = seconds_.find(name);
    return it == seconds_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> seconds_;
  std::string current_;
  std::chrono::steady_clock::time_point started_;
};

struct BenchModelArgs {
  std::string json;
  bool modules = false;
  std::int64_t n_res = 0;
  RandomRunSizes sizes;
  std::int64_t peak_size = 1024;
  CommonOptions common;
};

double stage_gflop(const StageFlops& f, const std::string& name, std::int64_t iterations) {
  const double it = static_cast<double>(iterations);
  if (name == "embedders") return it * f.embedders / 1e9;
  if (name == "templates") return it * f.templates / 1e9;
  if (name == "extra_msa") return it * f.extra_msa / 1e9;
  if (name == "evoformer") return it * f.evoformer / 1e9;
  if (name == "structure") return it * f.structure / 1e9;
  if (name == "heads") return f.heads / 1e9;
  return 0;
}

// What one benchmark run measured: the model's stages and the matmul peak around them.
struct ModelMeasurement {
  ModelSizes sizes;
  std::int64_t recycles = 0, iterations = 0;
  StageClock clock;
  ModuleClock modules;
  MatmulPeak peak;  // the higher of before and after
  double peak_before = 0, peak_after = 0;
  std::size_t peak_rss = 0, predicted_peak = 0;
  ChunkSizes chunks;
  std::size_t spill_bytes = 0;  // what the plan put in the spill tier
  DiskIo io;                    // storage traffic of the run (spill files, checkpoints)
};

// The model on random inputs, the stage clock following the run, with the matmul peak measured
// before and after and the higher kept: on a shared machine a burst from another job can pull
// one measurement far down, and a low peak inflates every "% of peak" that follows.
ModelMeasurement measure_model(const BenchModelArgs& a, const LoadedModel& model) {
  ModelMeasurement m;
  m.sizes = {a.n_res, a.sizes.msa_rows, a.sizes.extra_rows,
             a.sizes.templates.value_or(model.config().templates ? 4 : 0)};
  m.recycles = a.sizes.recycles;
  const DType precision = a.common.run.precision;
  m.peak = measure_matmul_peak(a.peak_size, 5, precision);
  const FeatureSource source = synthetic_feature_source(
      {m.sizes.n_res, m.sizes.msa_rows, m.sizes.extra_rows, m.sizes.templates, m.recycles + 1});
  RunOptions options;
  static_cast<SharedRunOptions&>(options) = a.common.run;
  options.recycles = m.recycles;
  options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  options.on_stage = [&m](std::string_view stage) {
    m.modules.stage(stage);
    if (stage == "done") {
      m.clock.end();
    } else if (stage != "trunk") {  // the trunk's own phases follow at once
      m.clock.begin(stage);
    }
  };
  options.on_trunk_phase = [&m](std::string_view phase) {
    m.modules.stage(phase);
    m.clock.begin(phase);
  };
  if (a.modules) options.on_module = [&m](std::string_view module) { m.modules.begin(module); };
  const DiskIo io_before = os_disk_io();
  const Prediction prediction = model.runner->run(source, options);
  const DiskIo io_after = os_disk_io();
  m.io = {io_after.read_bytes - io_before.read_bytes, io_after.write_bytes - io_before.write_bytes};
  m.spill_bytes = prediction.plan.chosen.spill_bytes();
  m.iterations = prediction.iterations;
  m.predicted_peak = prediction.plan.dram_peak_bytes;
  m.chunks = prediction.plan.chosen.chunks;
  m.peak_rss = os_peak_rss_bytes();
  m.peak_before = m.peak.gflops_per_s;
  const MatmulPeak after = measure_matmul_peak(a.peak_size, 5, precision);
  m.peak_after = after.gflops_per_s;
  if (after.gflops_per_s > m.peak.gflops_per_s) m.peak = after;
  return m;
}

// The per-stage table on stdout; the stages as JSON, and the forward seconds.
nlohmann::json print_stages(const ModelMeasurement& m, const StageFlops& flops,
                            double& forward_seconds) {
  nlohmann::json stages = nlohmann::json::array();
  forward_seconds = 0;
  std::printf("  %-10s %9s %10s %9s %8s\n", "stage", "seconds", "GFLOP", "GFLOP/s", "% peak");
  for (const char* name : kStages) {
    const double secs = m.clock.seconds(name);
    const double gflop = stage_gflop(flops, name, m.iterations);
    const double rate = secs > 0 ? gflop / secs : 0;
    if (std::string_view(name) != "features") forward_seconds += secs;
    stages.push_back({{"name", name}, {"seconds", secs}, {"gflop", gflop}, {"gflops_per_s", rate}});
    std::printf("  %-10s %9.3f %10.1f %9.1f %7.1f%%\n", name, secs, gflop, rate,
                100 * rate / m.peak.gflops_per_s);
  }
  return stages;
}

// The --modules table: each stage's modules with their share of the stage's time; what the
// stage spent outside its blocks' modules (embedding, the spilled state's write-backs between
// blocks) is the rest.
nlohmann::json print_modules(const ModelMeasurement& m) {
  nlohmann::json out = nlohmann::json::array();
  std::printf("  %-10s %-34s %9s %7s %11s %7s\n", "stage", "module", "seconds", "blocks",
              "s per block", "share");
  std::map<std::string, double> inside;
  for (const ModuleClock::Entry& e : m.modules.entries()) {
    const double stage_s = m.clock.seconds(e.stage);
    const std::int64_t blocks = m.modules.blocks(e.stage);
    inside[e.stage] += e.seconds;
    std::printf("  %-10s %-34s %9.3f %7lld %11.4f %6.1f%%\n", e.stage.c_str(), e.module.c_str(),
                e.seconds, static_cast<long long>(blocks),
                e.seconds / static_cast<double>(std::max<std::int64_t>(blocks, 1)),
                stage_s > 0 ? 100 * e.seconds / stage_s : 0.0);
    out.push_back(
        {{"stage", e.stage}, {"module", e.module}, {"seconds", e.seconds}, {"blocks", blocks}});
  }
  for (const auto& [stage, secs] : inside) {
    const double stage_s = m.clock.seconds(stage);
    std::printf("  %-10s %-34s %9.3f %7s %11s %6.1f%%\n", stage.c_str(), "(outside the modules)",
                stage_s - secs, "", "", stage_s > 0 ? 100 * (stage_s - secs) / stage_s : 0.0);
  }
  return out;
}

void write_bench_json(const BenchModelArgs& a, const ModelMeasurement& m, nlohmann::json stages,
                      nlohmann::json modules, double forward_seconds, double model_gflop) {
  const double rate = forward_seconds > 0 ? model_gflop / forward_seconds : 0;
  nlohmann::json out = {
      {"seconds", forward_seconds},
      {"features_seconds", m.clock.seconds("features")},
      {"model_gflop", model_gflop},
      {"model_gflops_per_s", rate},
      {"matmul_peak_gflops_per_s", m.peak.gflops_per_s},
      {"matmul_peak_before_after_gflops_per_s", {m.peak_before, m.peak_after}},
      {"matmul_peak_size", m.peak.size},
      {"matmul_impl", m.peak.impl},
      {"percent_of_peak", 100 * rate / m.peak.gflops_per_s},
      {"peak_rss_bytes", m.peak_rss},
      {"predicted_peak_bytes", m.predicted_peak},
      {"chunk_sizes", m.chunks},
      {"spill_bytes", m.spill_bytes},
      {"disk_read_bytes", m.io.read_bytes},
      {"disk_write_bytes", m.io.write_bytes},
      {"precision", precision_name(a.common.run.precision)},
      {"isa", bf16_support().isa},
      {"threads", omp_get_max_threads()},
      {"iterations", m.iterations},
      {"sizes",
       {{"n_res", m.sizes.n_res},
        {"msa_rows", m.sizes.msa_rows},
        {"extra_rows", m.sizes.extra_rows},
        {"templates", m.sizes.templates},
        {"recycles", m.recycles}}},
      {"flop_count",
       "2 x multiply-adds of every Linear and of the attention, outer-product and "
       "triangle products; elementwise work not counted"},
      {"stages", std::move(stages)}};
  if (a.modules) out["modules"] = std::move(modules);
  write_file_atomically(a.json, out.dump(2) + "\n");
}

void run_bench_model(BenchModelArgs& a) {
  resolve_common_options(a.common,
                         [](const std::string& line) { std::printf("%s\n", line.c_str()); });
  const LoadedModel model =
      load_model(a.common.params,
                 {.precision = a.common.run.precision, .templates = a.sizes.templates.value_or(0)});
  const ModelMeasurement m = measure_model(a, model);
  const char* precision_label = precision_name(a.common.run.precision);
  std::printf(
      "bench model: n_res %lld, MSA rows %lld, extra rows %lld, templates %lld, "
      "recycles %lld, threads %d, %s, ISA %s\n",
      static_cast<long long>(m.sizes.n_res), static_cast<long long>(m.sizes.msa_rows),
      static_cast<long long>(m.sizes.extra_rows), static_cast<long long>(m.sizes.templates),
      static_cast<long long>(m.recycles), omp_get_max_threads(), precision_label,
      bf16_support().isa.c_str());
  double forward_seconds = 0;
  nlohmann::json stages = print_stages(m, stage_flops(model.config(), m.sizes), forward_seconds);
  const double model_gflop = model_flops(model.config(), m.sizes, m.iterations) / 1e9;
  const double rate = forward_seconds > 0 ? model_gflop / forward_seconds : 0;
  std::printf(
      "  forward %.3f s, %.1f GFLOP, %.1f GFLOP/s = %.1f%% of the %s matmul peak "
      "(%lld^3: %.1f GFLOP/s, %s); peak RSS %.1f MiB; %s\n",
      forward_seconds, model_gflop, rate, 100 * rate / m.peak.gflops_per_s, precision_label,
      static_cast<long long>(m.peak.size), m.peak.gflops_per_s, m.peak.impl.c_str(),
      static_cast<double>(m.peak_rss) / (1 << 20), describe_chunk_sizes(m.chunks).c_str());
  nlohmann::json modules = a.modules ? print_modules(m) : nlohmann::json();
  if (m.spill_bytes > 0) {
    std::printf("  spilled %.1f MiB; the run read %.1f MiB and wrote %.1f MiB of storage\n",
                static_cast<double>(m.spill_bytes) / (1 << 20),
                static_cast<double>(m.io.read_bytes) / (1 << 20),
                static_cast<double>(m.io.write_bytes) / (1 << 20));
  }
  if (rate > m.peak.gflops_per_s) {
    std::printf(
        "  note: the model ran faster than the measured matmul peak (%.1f before, %.1f after): "
        "another job slowed both peak measurements; rerun on a quiet machine\n",
        m.peak_before, m.peak_after);
  }
  if (!a.json.empty())
    write_bench_json(a, m, std::move(stages), std::move(modules), forward_seconds, model_gflop);
}

}  // namespace

void add_bench_model_command(CLI::App& bench) {
  auto args = std::make_shared<BenchModelArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "model",
      "The whole model (every recycling iteration, then the heads) on random inputs of these "
      "sizes: wall time, FLOPs and GFLOP/s per stage, and the oneDNN matmul rate of the same "
      "precision measured in the same run, so the model's speed is also given as a fraction "
      "of it.");
  cmd->add_option("--n-res", args->n_res, "residues")
      ->required()
      ->transform(integer_in(1, kMaxResidues));
  add_random_run_options(*cmd, args->sizes);
  cmd->add_option("--peak-size", args->peak_size,
                  "m = n = k of the matmul whose rate is the peak (default 1024)")
      ->transform(integer_in(64, 8192));
  cmd->add_option("--json", args->json, "also write the results to this JSON file");
  cmd->add_flag("--modules", args->modules,
                "also time each module of the trunk's blocks (summed over the blocks of each "
                "stage), e.g. to see where a spilled run loses time against a run in DRAM");
  add_common_options(*cmd, args->common, Command::bench_model);
  cmd->callback([args] { run_bench_model(*args); });
}

}  // namespace cpufold
