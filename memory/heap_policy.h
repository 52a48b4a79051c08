// How the C heap treats large temporary buffers (oneDNN's sgemm packs its operands into
// buffers it mallocs and frees on every call).
#pragma once

#include <cstddef>

namespace cpufold {

// Blocks of this size and larger are mapped on their own and returned to the system when
// freed.
inline constexpr std::size_t kHeapMmapThreshold = std::size_t{1} << 20;
// Free memory at the top of a heap that is kept rather than returned to the system.
inline constexpr std::size_t kHeapTrimThreshold = 4 * kHeapMmapThreshold;

// Fixes glibc's mmap threshold at kHeapMmapThreshold. By default glibc raises the threshold to
// the size of every mapped block that is freed (up to 32 MiB), so after the first 8 MiB sgemm
// buffer all later ones come from the heap, whose free pieces stay resident: 79 MiB of heap at
// the peak of an fp32 run at N = 256 where 22 MiB was live.
// Also fixes the trim threshold at kHeapTrimThreshold. Fixing the mmap threshold leaves glibc's
// default of 128 KiB, under which every free of a block between 128 KiB and 1 MiB at the top
// of a heap hands its pages back and the next malloc maps them again: oneDNN's bf16 gemm:jit
// mallocs 154 KiB per call of the attention's q·kᵀ at 512 keys, 16,384 times per Evoformer
// block at N = 256, two system calls and a TLB shootdown each. Call once, first thing in main().
void limit_heap_growth();

// Returns the heap's free pages to the system, also those between live blocks (malloc_trim).
// For after a phase that freed many blocks under kHeapMmapThreshold at once: the weights a
// first run packs privately (bf16: most Linears are under 1 MiB) are freed once the cache
// file is mapped, and would otherwise stay resident beside it for the whole run.
void return_free_heap_memory();

}  // namespace cpufold
