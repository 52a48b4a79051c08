#include "pipeline/batch/job_shards.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <numeric>

#include "memory/error.h"

namespace cpufold {
namespace {

std::optional<long> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  long n = 0;
  const char* end = v + std::char_traits<char>::length(v);
  auto [p, ec] = std::from_chars(v, end, n);
  if (ec != std::errc() || p != end) {
    throw InputError(std::string(name) + "='" + v + "' is not a whole number");
  }
  return n;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  Shard s;
  const auto number = [&](std::string_view part, int& into) {
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), into);
    return ec == std::errc() && p == part.data() + part.size() && !part.empty();
  };
  const std::string_view t(text);
  if (slash == std::string::npos || !number(t.substr(0, slash), s.index) ||
      !number(t.substr(slash + 1), s.count) || s.count < 1 || s.index < 1 || s.index > s.count) {
    throw InputError("--shard '" + text + "': expected I/N with 1 <= I <= N, e.g. --shard 2/8");
  }
  return s;
}

std::optional<Shard> slurm_array_shard() {
  const auto id = env_number("SLURM_ARRAY_TASK_ID");
  if (!id) return std::nullopt;
  const auto min = env_number("SLURM_ARRAY_TASK_MIN");
  const auto max = env_number("SLURM_ARRAY_TASK_MAX");
  const auto count = env_number("SLURM_ARRAY_TASK_COUNT");
  const long first = min.value_or(0);
  // An array 1-4 or 0-3 has 4 tasks; with a step (1-7:2) only COUNT is right, and the task
  // numbers are then not consecutive: such arrays are refused below.
  const long n = count ? *count : (max ? *max - first + 1 : 0);
  const long i = *id - first + 1;
  if (n < 1 || i < 1 || i > n || (max && count && *max - first + 1 != *count)) {
    throw InputError(
        "SLURM_ARRAY_TASK_ID=" + std::to_string(*id) +
        " cannot be mapped to a shard (use an array of consecutive task ids, e.g. --array=1-8, "
        "or pass --shard I/N)");
  }
  return Shard{static_cast<int>(i), static_cast<int>(n)};
}

std::vector<std::size_t> shard_members(std::span<const double> costs,
                                       std::span<const std::string> names, const Shard& shard) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (costs[a] != costs[b]) return costs[a] > costs[b];
    return names[a] < names[b];
  });
  std::vector<double> load(static_cast<std::size_t>(shard.count), 0.0);
  std::vector<std::size_t> mine;
  for (std::size_t job : order) {
    const auto owner =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[owner] += costs[job];
    if (static_cast<int>(owner) + 1 == shard.index) mine.push_back(job);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

}  // namespace cpufold
