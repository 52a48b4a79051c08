#include "memory/out_of_memory.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdio>

#include "memory/system_memory.h"

namespace cpufold {
namespace {

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  return buf;
}

}  // namespace

std::string memory_limits_note() {
  std::string note;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    note = "address-space limit (ulimit -v) " + mib(static_cast<double>(limit.rlim_cur));
  }
  if (const auto available = static_cast<double>(mem_available_bytes()); available > 0) {
    note += (note.empty() ? "" : ", ") + mib(available) + " of RAM available";
  }
  return note;
}

BudgetError out_of_memory(std::string_view what) {
  const std::string note = memory_limits_note();
  return BudgetError(std::string(what) + ": out of memory" +
                     (note.empty() ? "" : " (" + note + ")") +
                     "; give cpufold more memory (raise ulimit -v or the container's limit) or "
                     "pass --chunk-size to bound transient memory");
}

void require_address_space(std::size_t bytes, std::string_view what) {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw out_of_memory(std::string(what) + " needs about " + mib(static_cast<double>(bytes)) +
                        " of free address space");
  }
  ::munmap(p, bytes);
}

}  // namespace cpufold
