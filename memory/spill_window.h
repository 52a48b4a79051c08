// A pass over a spilled tensor, in order along one axis, read and written by cpufold instead of
// by page faults. The axis is cut into slabs of about kSpillSlabBytes (a whole number of the
// pass's steps); the pass works on a copy of its current slab in DRAM. Two ways to move them:
// - direct (memory/spill_io.h), where the file system takes O_DIRECT and the kernel an io_uring,
//   and the slabs' runs are page-aligned: the next slab is read into a second buffer and the
//   last one written from a third while the current one computes, by the device, without the
//   page cache. Measured on an ext4 spill file (full model at N = 256, fp32, a quarter of its
//   peak under a cgroup limit, the Evoformer's column slabs 516 runs of 8 KiB): 188 s against
//   200 s buffered, 35 thousand context switches against 78 thousand.
// - buffered, otherwise: read with pread after the kernel was asked to read it ahead
//   (POSIX_FADV_WILLNEED) while the slab before it computed, written back with pwrite when the
//   pass moves on, its write-back started at once and waited for one slab later, when its
//   pages leave the page cache. (Reader and writer threads were slower on 2 cores: they take
//   time from the compute threads, which wait for each other.)
// Either way a fixed window of the tensor is resident, which the memory plan counts, a cgroup
// limit never has to reclaim a spilled page, each byte is read once and written once per pass,
// and no page of the mapping is faulted or write-protected (each costs a TLB shootdown across
// the run's threads). On memory that is not a spill file (DRAM, a far NUMA node), and on a spilled
// tensor the plan leaves room to cache whole (FileTier::set_cache_bytes), the pass works on the
// tensor itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory/spill_io.h"
#include "memory/tensor.h"
#include "memory/tier.h"

namespace cpufold {

// Bytes a slab aims at: large enough for the disk's sequential speed, small beside a quarter of
// a run's budget.
inline constexpr std::size_t kSpillSlabBytes = std::size_t{4} << 20;
// The most a slab of a pass that is alone may take (see Sharing).
inline constexpr std::size_t kSoleSlabBytes = std::size_t{32} << 20;

class SpillWindow {
 public:
  enum class Access { read, write };  // write: the pass changes what it visits
  // alone: no other pass stages slabs while this one is open (the MSA column attention's, with
  // the transition inside). A direct pass that is alone stages slabs of up to a third of the
  // plan's spill window (FileTier::set_window_bytes): direct I/O keeps no page cache, so its
  // three slabs take no more than the window, which counts a buffered pass's page cache too. A
  // column pass makes a request per row and slab, and each costs the CPU as much as the bytes:
  // at N = 256 and chunk 2 the Evoformer's column pass (516 runs of 8 KiB per slab) took
  // 0.87-0.95 s per block spilled, 0.50-0.59 s in DRAM, and 0.77-0.82 s with slabs of 24-32
  // columns (`bench block --spill-dir`).
  enum class Sharing { with_others, alone };

  // whole_bytes for a tensor that every pass over it stages: staged even where the plan leaves
  // the page cache room for it. Cached, a pass pages it through the mapping: a fault per page
  // (each a page_mkwrite when it writes), and under a cgroup limit, where the weights' and the
  // pair's pages compete for the same room, its pages are reclaimed and faulted back pass after
  // pass. Two kinds:
  // - a module's kept projection, written by one pass and read back by the next, then dead: 16
  //   MiB took 77-125 ms per round through the mapping in an ext4 spill file (a standalone
  //   program), where the two streamed passes move 32 MiB by direct I/O beside the compute;
  // - the MSA representations, which no module pages: at N = 256 with half its peak the MSA
  //   (129 MiB) fitted the cache room, and the Evoformer's row attention faulted 1.6 million
  //   pages per iteration (15.7 s of system time) and took 37-44 s against 19.5-19.9 s in DRAM;
  //   staged, 24-26 s (`bench model --mem-budget 445M` under `memlimit 445M`).
  // The pair stays cached where it fits: the triangle updates page it whatever the windows do.
  static constexpr std::size_t kAlwaysStaged = SIZE_MAX;

  // A pass over `t` along `axis` (0: rows; k: the k-th axis, every index of the axes before it
  // visited for each slab), `step` indices at a time from index 0 (the last step may be
  // shorter). `whole_bytes`: the size of the tensor t is part of, which decides whether it is
  // cached whole instead (0: t's own; kAlwaysStaged: never cached).
  SpillWindow(const Tensor& t, int axis, std::int64_t step, Access access,
              std::size_t whole_bytes = 0, Sharing sharing = Sharing::with_others);
  // Writes back what the pass changed unless an exception is unwinding (then the pass's result
  // is abandoned anyway); call finish() to see a write error as an exception.
  ~SpillWindow() noexcept(false);
  SpillWindow(const SpillWindow&) = delete;
  SpillWindow& operator=(const SpillWindow&) = delete;

  // Indices [begin, end) of the axis (one step) as a view the pass may read and, with
  // Access::write, change: t's own memory when t is not spilled, else the staged slab's.
  Tensor at(std::int64_t begin, std::int64_t end);
  // Writes back the last slab and drops the window's pages. Idempotent.
  void finish();
  bool staged() const { return fd_ >= 0; }
  // Staged with O_DIRECT reads and writes in flight beside the compute (see above).
  bool direct() const { return queue_ != nullptr; }
  // Indices of the axis per slab (the whole axis when not staged).
  std::int64_t slab_length() const { return slab_; }

  // Indices per slab of a pass that is not alone, for `outer` runs of `index_bytes` per index of
  // an axis of length `n`, `step` indices per step (0: all): what the pass's slab_length() is,
  // for a module that sizes its own steps by it.
  static std::int64_t default_slab_length(std::int64_t outer, std::int64_t n,
                                          std::size_t index_bytes, std::int64_t step);
  // The most of such a pass resident at once, for the memory plan: `outer` runs of
  // `index_bytes` per index of an axis of length `n`, `step` indices per step (0: all). The
  // staged slab and the page cache's share (the slab read ahead, the ones being written back;
  // a read pass writes none back). A direct pass holds three staged slabs and no page cache,
  // which is less.
  static std::size_t resident_bytes(std::int64_t outer, std::int64_t n, std::size_t index_bytes,
                                    std::int64_t step, Access access = Access::write);

 private:
  void load(std::int64_t slab, std::byte* into) const;
  void store(std::int64_t slab, const std::byte* from) const;
  // Waits for slab's write-back (a write pass) and drops its span's clean pages.
  void release(std::int64_t slab) const;
  void set_slab(std::int64_t indices);
  std::size_t slab_bytes() const;  // a whole slab's
  std::int64_t slab_begin(std::int64_t slab) const { return slab * slab_; }
  std::int64_t slab_length(std::int64_t slab) const;
  std::size_t file_offset(std::int64_t outer_index, std::int64_t axis_index) const;
  void prefetch(std::int64_t slab) const;
  // Whether every run of every slab is aligned for O_DIRECT, in the file and in the staging.
  bool runs_aligned() const;
  // Hands the staging buffers back to the pool once no request is in flight (also when a
  // pass fails, so the pool's count of what is staged stays true).
  void return_staging();
  // The direct pass moving to `slab`: the current slab's write queued, `slab` waited for, the
  // one after it queued for reading.
  void advance_direct(std::int64_t slab);
  void queue_transfer(std::int64_t slab, bool write);
  std::byte* buffer(std::int64_t slab) const {
    return staging_[direct() ? static_cast<std::size_t>(slab % SpillQueue::kTags) : 0].data();
  }

  Tensor t_;
  int axis_ = 0;
  Access access_;
  int fd_ = -1;                      // the spill file; -1: t is not spilled
  const std::byte* base_ = nullptr;  // the spill file's mapping (file offset 0)
  std::int64_t outer_ = 1;           // runs per slab (product of the axes before `axis`)
  std::size_t outer_stride_ = 0;     // bytes between runs in t
  std::size_t index_bytes_ = 0;      // bytes per index of the axis within a run
  std::int64_t n_ = 0, slab_ = 0;    // axis length, indices per slab
  std::int64_t slabs_ = 0;
  int direct_fd_ = -1;
  std::array<Region, SpillQueue::kTags> staging_;  // the slab the pass works on ([0]), and with
                                                   // direct, the next and the last (slab % 3)
  std::int64_t current_ = -1;                      // that slab
  std::int64_t stored_ = -1;  // the slab before it, when stored and not yet released
  bool finished_ = false;
  bool pooled_ = true;  // the staging buffers came from the pool (slabs of the default size)
  // Direct I/O in flight; after staging_, so that it is destroyed (waiting) first.
  std::unique_ptr<SpillQueue> queue_;
};

}  // namespace cpufold
