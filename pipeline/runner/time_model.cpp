#include "pipeline/runner/time_model.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/atomic_file.h"
#include "memory/error.h"
#include "ops/compute_precision.h"
#include "pipeline/runner/run_plan.h"

namespace cpufold {

namespace fs = std::filesystem;

double TimeModel::relative_time(ChunkFamily family, std::int64_t chunk) const {
  const std::map<std::int64_t, double>& factors =
      family == ChunkFamily::extra_msa && !extra_msa_chunk_factor.empty() ? extra_msa_chunk_factor
                                                                          : chunk_factor;
  // A measured chunk takes its own factor; another the factor of the nearest larger measured
  // chunk (0, unsliced, ranks above all), whose slices it shares the kernels of.
  const auto rank = [](std::int64_t c) {
    return c <= 0 ? std::numeric_limits<std::int64_t>::max() : c;
  };
  const double* nearest = nullptr;
  std::int64_t nearest_rank = 0;
  for (const auto& [c, f] : factors) {
    if (rank(c) >= rank(chunk) && (nearest == nullptr || rank(c) < nearest_rank)) {
      nearest = &f;
      nearest_rank = rank(c);
    }
  }
  return nearest != nullptr ? std::max(1.0, *nearest) : 1.0;
}

double TimeModel::relative_time(const ChunkSizes& chunks, const FamilyShares& s) const {
  const double total = s.templates + s.extra_msa + s.evoformer + s.structure;
  if (!(total > 0)) return relative_time(ChunkFamily::evoformer, chunks.evoformer);
  return (s.templates * relative_time(ChunkFamily::templates, chunks.templates) +
          s.extra_msa * relative_time(ChunkFamily::extra_msa, chunks.extra_msa) +
          s.evoformer * relative_time(ChunkFamily::evoformer, chunks.evoformer) +
          s.structure * relative_time(ChunkFamily::structure, chunks.structure)) /
         total;
}

double TimeModel::run_gflops(int threads, bool bf16) const {
  // Beyond two threads, each adds what the second added.
  const double scale = 1 + std::max(0, threads - 1) * (instances.two_thread_speedup - 1);
  return instances.gflops * scale * (bf16 ? instances.bf16_speedup : 1);
}

double TimeModel::spill_factor(SpillLevel level) const {
  switch (level) {
    case SpillLevel::none:
      return 1;
    case SpillLevel::activations:
      return std::max(1.0, spill_activations);
    case SpillLevel::outputs:
      return std::max({1.0, spill_activations, spill_outputs});
  }
  return 1;
}

TimeModel builtin_time_model() {
  TimeModel m;
  // `cpufold bench calibrate` at N = 256 (full widths, fp32, 2 threads, AMD EPYC with
  // AVX-512), each chunk the fastest of two runs, over the fastest chunk's time.
  // One Evoformer block (516 rows) measured 0: 1.033, 256: 1.012, 128: 1.0, 64: 1.063, 32:
  // 1.025, 16: 1.041, 8: 1.09, 4: 1.164, 2: 1.262, 1: 2.836. Kept as 1.0 from 64 up: those
  // differences were within the run-to-run noise, and an earlier calibration found unsliced
  // fastest. Below 64 rows the triangle multiplication's slabs shrink and one-row slices fall
  // back to matrix-vector products.
  m.chunk_factor = {{0, 1.0},   {256, 1.0}, {128, 1.0}, {64, 1.0}, {32, 1.025},
                    {16, 1.04}, {8, 1.09},  {4, 1.16},  {2, 1.26}, {1, 2.84}};
  // One extra-MSA block (5,120 rows) measured 0: 1.218, 256: 1.0, 128: 1.069, 64: 1.031, 32:
  // 1.163, 16: 1.248, 8: 1.756, 4: 1.902, 2: 2.773, 1: 4.849. Unsliced is slower: its row
  // attention and transition run over all 5,120 rows at once. Small chunks cost much more than
  // in the Evoformer: the outer product mean recomputes the right projection of all 5,120 rows
  // for every slab of residues.
  m.extra_msa_chunk_factor = {{0, 1.22},  {256, 1.0}, {128, 1.03}, {64, 1.03}, {32, 1.16},
                              {16, 1.25}, {8, 1.76},  {4, 1.9},    {2, 2.77},  {1, 4.85}};
  // Estimates, not measurements (README, "Memory").
  m.spill_activations = 1.10;
  m.spill_outputs = 1.25;
  // One Evoformer block at N = 256 (512 rows, chunk 8, fp32, 2 threads) with its MSA and
  // triangle edges streamed from an ext4 file: 2.95 s against 1.86 s in DRAM, moving 737 MiB
  // read and 480 MiB written: 1.17 GB/s.
  m.spill_bandwidth = 1.1e9;
  // Full model_1_ptm configuration at N = 128, one iteration, fp32 (issue 30's table): 81.9 s
  // on 1 thread, 47.6 s on 2; two 1-thread instances pinned side by side 99.7 s each; bf16 runs
  // at N = 256 took 68.4 s against fp32's 120.9 s.
  m.instances.gflops = 12913.5 / 81.9;  // model_flops of that run, in GFLOP
  m.instances.bf16_speedup = 120.9 / 68.4;
  m.instances.two_thread_speedup = 81.9 / 47.6;
  m.instances.side_by_side = 99.7 / 81.9;
  m.cpu = "AMD EPYC";
  m.isa = "avx512_core_bf16";
  m.threads = 2;
  m.source =
      "built in (measured on one AMD EPYC, AVX-512, 2 threads; `cpufold bench calibrate` "
      "measures this machine)";
  return m;
}

std::string this_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    return name;
  }
  return "unknown CPU";
}

std::string this_isa() {
  return bf16_support().isa;
}

fs::path time_model_path() {
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  if (const std::string file = env("CPUFOLD_TIME_MODEL"); !file.empty()) return file;
  if (const std::string dir = env("CPUFOLD_CACHE_DIR"); !dir.empty())
    return fs::path(dir) / "time_model.json";
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    return fs::path(xdg) / "cpufold" / "time_model.json";
  if (const std::string home = env("HOME"); !home.empty())
    return fs::path(home) / ".cache" / "cpufold" / "time_model.json";
  return {};
}

namespace {

TimeModel builtin_because(const std::string& why) {
  TimeModel m = builtin_time_model();
  m.source += "; " + why;
  return m;
}

// {"chunk": factor, ...}, each factor in [1, 1000).
std::map<std::int64_t, double> parse_factors(const nlohmann::json& j) {
  std::map<std::int64_t, double> factors;
  for (const auto& [chunk, factor] : j.items()) {
    const double f = factor.get<double>();
    if (!(f >= 1 && f < 1000)) throw std::runtime_error("chunk factor out of range");
    factors[std::stoll(chunk)] = f;
  }
  return factors;
}

nlohmann::ordered_json factors_json(const std::map<std::int64_t, double>& factors) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [chunk, factor] : factors) j[std::to_string(chunk)] = factor;
  return j;
}

TimeModel parse_time_model(const nlohmann::json& j) {
  TimeModel m;
  m.cpu = j.at("cpu").get<std::string>();
  m.isa = j.at("isa").get<std::string>();
  m.threads = j.at("threads").get<int>();
  m.chunk_factor = parse_factors(j.at("chunk_factor"));
  if (m.chunk_factor.empty()) throw std::runtime_error("no chunk factors");
  if (j.contains("extra_msa_chunk_factor"))
    m.extra_msa_chunk_factor = parse_factors(j.at("extra_msa_chunk_factor"));
  m.spill_activations = j.value("spill_activations", builtin_time_model().spill_activations);
  m.spill_outputs = j.value("spill_outputs", builtin_time_model().spill_outputs);
  m.spill_bandwidth = j.value("spill_bandwidth", builtin_time_model().spill_bandwidth);
  m.instances = builtin_time_model().instances;
  if (j.contains("instances")) {
    const nlohmann::json& i = j.at("instances");
    m.instances.gflops = i.value("gflops", m.instances.gflops);
    m.instances.bf16_speedup = i.value("bf16_speedup", m.instances.bf16_speedup);
    m.instances.two_thread_speedup = i.value("two_thread_speedup", m.instances.two_thread_speedup);
    m.instances.side_by_side = i.value("side_by_side", m.instances.side_by_side);
  }
  return m;
}

}  // namespace

TimeModel load_time_model(const fs::path& path) {
  std::error_code ec;
  if (path.empty() || !fs::exists(path, ec)) return builtin_time_model();
  TimeModel m;
  try {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    m = parse_time_model(nlohmann::json::parse(text.str()));
  } catch (const std::exception& e) {
    return builtin_because(path.string() + " is not a time model cpufold can read (" + e.what() +
                           "): rerun `cpufold bench calibrate`");
  }
  if (m.cpu != this_cpu() || m.isa != this_isa()) {
    return builtin_because(path.string() + " was measured on " + m.cpu + " (" + m.isa +
                           "), not this " + this_cpu() + " (" + this_isa() + ")");
  }
  m.source = "calibrated on this machine (" + path.string() + ", " + std::to_string(m.threads) +
             " threads)";
  return m;
}

const TimeModel& machine_time_model() {
  static const TimeModel model = load_time_model(time_model_path());
  return model;
}

void save_time_model(const TimeModel& model, const fs::path& path) {
  nlohmann::ordered_json j;
  j["cpu"] = model.cpu;
  j["isa"] = model.isa;
  j["threads"] = model.threads;
  j["chunk_factor"] = factors_json(model.chunk_factor);
  if (!model.extra_msa_chunk_factor.empty())
    j["extra_msa_chunk_factor"] = factors_json(model.extra_msa_chunk_factor);
  j["spill_activations"] = model.spill_activations;
  j["spill_outputs"] = model.spill_outputs;
  j["spill_bandwidth"] = model.spill_bandwidth;
  j["instances"] = {{"gflops", model.instances.gflops},
                    {"bf16_speedup", model.instances.bf16_speedup},
                    {"two_thread_speedup", model.instances.two_thread_speedup},
                    {"side_by_side", model.instances.side_by_side}};
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace cpufold
