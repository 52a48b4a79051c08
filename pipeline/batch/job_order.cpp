#include "pipeline/batch/job_order.h"

#include <algorithm>
#include <fstream>
#include <random>

#include "io/sequence_input.h"
#include "memory/error.h"
#include "pipeline/batch/predict_jobs.h"

namespace cpufold {
namespace {

// Rows of an A3M file: its header lines (ColabFold counts the same).
std::size_t a3m_rows(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);) rows += !line.empty() && line.front() == '>';
  return rows;
}

// Uniform in [0, bound) by rejection: std::uniform_int_distribution differs between standard
// libraries, mt19937_64's raw output does not.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % bound;
  for (;;) {
    const std::uint64_t x = rng();
    if (x < limit) return x % bound;
  }
}

}  // namespace

void reorder_jobs(std::vector<PredictJob>& jobs, QueryOrder order, std::uint64_t seed) {
  if (order == QueryOrder::msa_depth) {
    std::vector<std::pair<std::size_t, PredictJob>> keyed;
    for (PredictJob& job : jobs) {
      // A failed job's file may be anything (too large, a device): it is not read again.
      const bool readable = !job.a3m.empty() && job.error.empty();
      keyed.emplace_back(readable ? a3m_rows(job.a3m) : 0, std::move(job));
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = std::move(keyed[i].second);
  } else if (order == QueryOrder::random) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = jobs.size(); i > 1; --i) {  // Fisher-Yates
      std::swap(jobs[i - 1], jobs[uniform_below(rng, i)]);
    }
  }
}

void apply_jobname_prefix(std::vector<PredictJob>& jobs, const std::string& prefix) {
  if (prefix.empty()) return;
  const std::size_t digits = std::to_string(jobs.size()).size();
  const std::string safe = job_name(prefix);
  if (safe.size() + 1 + digits > max_job_name_bytes()) {
    throw InputError("--jobname-prefix is " + std::to_string(safe.size()) +
                     " characters long; with '_' and the job number it must fit in " +
                     std::to_string(max_job_name_bytes()) +
                     " so that every output file name fits the file system's limit");
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::string number = std::to_string(i);
    number.insert(0, digits - number.size(), '0');
    jobs[i].name = safe + "_" + number;
  }
}

}  // namespace cpufold
