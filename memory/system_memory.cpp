#include "memory/system_memory.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// A file holding one number ("max" reads as no limit); empty when absent or unlimited.
std::optional<std::size_t> read_number(const fs::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return static_cast<std::size_t>(std::stoull(word));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The memory cgroup path of this process and whether it is v2 ("0::/path") or v1
// ("N:memory:/path").
struct CgroupPath {
  fs::path root;
  fs::path relative;
  bool v2 = false;
};

std::optional<CgroupPath> own_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::optional<CgroupPath> v2;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const fs::path path = fs::path(line.substr(second + 1)).relative_path();
    if (controllers.find("memory") != std::string::npos &&
        fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
      return CgroupPath{"/sys/fs/cgroup/memory", path, false};
    }
    if (controllers.empty() && line.starts_with("0::"))
      v2 = CgroupPath{"/sys/fs/cgroup", path, true};
  }
  return v2;
}

}  // namespace

std::size_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::optional<CgroupMemory> cgroup_memory() {
  const std::optional<CgroupPath> cg = own_cgroup();
  if (!cg) return std::nullopt;
  const char* limit_file = cg->v2 ? "memory.max" : "memory.limit_in_bytes";
  const char* usage_file = cg->v2 ? "memory.current" : "memory.usage_in_bytes";
  // Inside a cgroup namespace the own path may not exist under the mount: the mount root is
  // then the own cgroup. A limit set on an ancestor binds too, so take the tightest.
  std::optional<CgroupMemory> best;
  for (fs::path dir = cg->root / cg->relative;; dir = dir.parent_path()) {
    const std::optional<std::size_t> limit = read_number(dir / limit_file);
    // cgroup v1 reports "no limit" as a huge page-rounded number.
    if (limit && *limit < (std::size_t{1} << 60) && (!best || *limit < best->limit)) {
      best = CgroupMemory{*limit, read_number(dir / usage_file).value_or(0)};
    }
    if (dir == cg->root || !dir.has_relative_path() ||
        dir.string().size() <= cg->root.string().size())
      break;
  }
  return best;
}

std::size_t usable_memory_bytes() {
  std::size_t usable = mem_available_bytes();
  if (const auto cg = cgroup_memory()) {
    const std::size_t room = cg->limit > cg->usage ? cg->limit - cg->usage : 0;
    usable = usable == 0 ? room : std::min(usable, room);
  }
  return usable;
}

}  // namespace cpufold
