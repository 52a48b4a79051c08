// Streams a FileTier arena larger than the memory one wants to use, row slab by row slab:
// writes every slab and evicts it behind itself, then reads every slab back, checks it and
// evicts it again. Resident memory stays at about one slab. Run by hand under
// ../shared/tools/memlimit, and by tests/memory/spill_stream_e2e_test.cpp:
//   spill_stream DIR ARENA_MIB SLAB_MIB [--no-evict]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memory/arena.h"
#include "memory/error.h"
#include "memory/file_tier.h"
#include "memory/peak_tracker.h"

using namespace cpufold;

namespace {

constexpr std::int64_t kCols = 16384;  // 64 KiB rows
constexpr std::size_t kMiB = std::size_t{1} << 20;

std::int32_t value(std::int64_t row, std::int64_t col) {
  return static_cast<std::int32_t>(row * 7919 + col);
}

// Returns the first row whose contents differ, or -1.
std::int64_t stream(Arena& arena, Tensor& t, std::int64_t slab_rows, bool evict) {
  auto* data = static_cast<std::int32_t*>(t.data());
  const std::int64_t rows = t.shape()[0];
  for (std::int64_t r0 = 0; r0 < rows; r0 += slab_rows) {
    const std::int64_t r1 = std::min(rows, r0 + slab_rows);
    for (std::int64_t r = r0; r < r1; ++r) {
      for (std::int64_t c = 0; c < kCols; ++c) data[r * kCols + c] = value(r, c);
    }
    if (evict) arena.evict(data + r0 * kCols, static_cast<std::size_t>((r1 - r0) * kCols) * 4);
  }
  for (std::int64_t r0 = 0; r0 < rows; r0 += slab_rows) {
    const std::int64_t r1 = std::min(rows, r0 + slab_rows);
    for (std::int64_t r = r0; r < r1; ++r) {
      for (std::int64_t c = 0; c < kCols; ++c) {
        if (data[r * kCols + c] != value(r, c)) return r;
      }
    }
    if (evict) arena.evict(data + r0 * kCols, static_cast<std::size_t>((r1 - r0) * kCols) * 4);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5 || (argc == 5 && std::string(argv[4]) != "--no-evict")) {
    std::fprintf(stderr, "usage: spill_stream DIR ARENA_MIB SLAB_MIB [--no-evict]\n");
    return 2;
  }
  const std::size_t arena_mib = std::strtoull(argv[2], nullptr, 10);
  const std::size_t slab_mib = std::strtoull(argv[3], nullptr, 10);
  const bool evict = argc == 4;
  if (arena_mib == 0 || slab_mib == 0) {
    std::fprintf(stderr, "spill_stream: ARENA_MIB and SLAB_MIB must be positive integers\n");
    return 2;
  }
  try {
    FileTier tier(argv[1]);
    const auto rows = static_cast<std::int64_t>(arena_mib * kMiB / (kCols * 4));
    Arena arena("spill_stream", tier, arena_mib * kMiB);
    Tensor t = arena.allocate(DType::i32, {rows, kCols});
    const auto slab_rows = static_cast<std::int64_t>(slab_mib * kMiB / (kCols * 4));
    if (const std::int64_t bad = stream(arena, t, slab_rows, evict); bad >= 0) {
      std::fprintf(stderr, "spill_stream: row %lld read back wrong\n", static_cast<long long>(bad));
      return 1;
    }
    std::printf("spill_stream: %zu MiB in %zu MiB slabs through %s%s, verified; peak RSS %zu MiB\n",
                arena_mib, slab_mib, tier.name().c_str(), evict ? "" : " without eviction",
                os_peak_rss_bytes() / kMiB);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "spill_stream: %s\n", e.what());
    return e.exit_code();
  }
}
