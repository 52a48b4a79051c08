#include "pipeline/cli/calibrate_instances.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "memory/error.h"
#include "ops/compute_precision.h"
#include "pipeline/batch/node_cores.h"
#include "pipeline/batch/worker_process.h"

namespace cpufold {
namespace {

struct BlockTime {
  double seconds = 0, gflops = 0;
};

// Runs `bench block` in one child per slot at once; the seconds and GFLOP/s each measured.
std::vector<BlockTime> run_blocks(const InstanceCalibration& c, const std::vector<CoreSlot>& slots,
                                  const char* precision) {
  char dir_template[] = "/tmp/cpufold-calibrate-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) throw InternalError("calibrate: cannot make a temp dir");
  const std::filesystem::path dir(dir_template);
  std::vector<pid_t> pids;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    WorkerSpec spec;
    spec.args = {"bench",        "block",
                 "--stack",      "evoformer",
                 "--n-res",      std::to_string(c.n_res),
                 "--msa-rows",   std::to_string(c.msa_rows),
                 "--chunk-size", std::to_string(c.chunk),
                 "--threads",    std::to_string(slots[i].cpus.size()),
                 "--repeat",     std::to_string(c.repeat),
                 "--precision",  precision,
                 "--params",     c.params.string()};
    spec.slot = slots[i];
    spec.output = dir / (std::to_string(i) + ".txt");
    pids.push_back(start_worker(spec));
  }
  std::vector<BlockTime> times;
  const std::regex line(R"(time ([0-9.]+) s per block, [0-9.]+ GFLOP, ([0-9.]+) GFLOP/s)");
  for (std::size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    while (::waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    std::ifstream in(dir / (std::to_string(i) + ".txt"));
    std::stringstream text;
    text << in.rdbuf();
    std::smatch m;
    const std::string out = text.str();
    if (exit_code_of(status) != 0 || !std::regex_search(out, m, line)) {
      std::filesystem::remove_all(dir);
      throw InternalError("calibrate: a timed block ended with " + describe_exit(status) + ": " +
                          out.substr(out.size() > 400 ? out.size() - 400 : 0));
    }
    times.push_back({std::stod(m[1]), std::stod(m[2])});
  }
  std::filesystem::remove_all(dir);
  return times;
}

// `measured` when it is a usable ratio or rate, else `kept` (a block too small to time: the
// bench prints milliseconds).
double usable(double measured, double kept) {
  return std::isfinite(measured) && measured > 0 ? measured : kept;
}

}  // namespace

void measure_instance_scaling(const InstanceCalibration& c, TimeModel& model) {
  const NodeCores node = node_cores();
  const int cores = static_cast<int>(node.cpus.size());
  std::printf("instances side by side (one Evoformer block, chunk %lld, pinned child processes):\n",
              static_cast<long long>(c.chunk));
  std::fflush(stdout);
  const BlockTime alone = run_blocks(c, core_slots(node, 1, 1), "fp32").front();
  InstanceScaling& s = model.instances;
  s.gflops = usable(alone.gflops, s.gflops);
  std::printf("  1 instance, 1 thread: %.3f s, %.1f GFLOP/s\n", alone.seconds, alone.gflops);
  if (cores >= 2) {
    const BlockTime two = run_blocks(c, core_slots(node, 1, 2), "fp32").front();
    s.two_thread_speedup = usable(alone.seconds / two.seconds, s.two_thread_speedup);
    const std::vector<BlockTime> all = run_blocks(c, core_slots(node, cores, 1), "fp32");
    double sum = 0;
    for (const BlockTime& t : all) sum += t.seconds;
    s.side_by_side =
        std::max(1.0, usable(sum / static_cast<double>(all.size()) / alone.seconds, 1.0));
    std::printf(
        "  1 instance, 2 threads: %.3f s (%.2fx)\n  %d instances, 1 thread each: %.3f s "
        "on average (each %.2fx its time alone)\n",
        two.seconds, s.two_thread_speedup, cores, sum / static_cast<double>(all.size()),
        s.side_by_side);
  }
  if (bf16_support().native) {
    const BlockTime bf16 = run_blocks(c, core_slots(node, 1, 1), "bf16").front();
    s.bf16_speedup = usable(alone.seconds / bf16.seconds, s.bf16_speedup);
    std::printf("  1 instance, 1 thread, bf16: %.3f s (%.2fx fp32)\n", bf16.seconds,
                s.bf16_speedup);
  }
  std::fflush(stdout);
}

}  // namespace cpufold
