#include "memory/spill_window.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "memory/error.h"
#include "memory/file_tier.h"

namespace cpufold {
namespace {

std::size_t page_bytes() {
  static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// Indices per slab: about kSpillSlabBytes but no more than an eighth of the tensor (a small
// spilled tensor is still streamed, not staged whole), a whole number of steps, and in a column
// pass (more than one run) at least a page per run: a page shared by several slabs would be read
// and written once for each (the extra-MSA representation's columns are 128-256 bytes per row).
// With `at_most`, no more than slab_bytes (a whole number of steps and pages rounded down, not
// up), unless one such unit is more.
std::int64_t slab_indices(std::int64_t outer, std::int64_t n, std::size_t index_bytes,
                          std::int64_t step, std::size_t slab_bytes = kSpillSlabBytes,
                          bool at_most = false) {
  step = step > 0 ? std::min(step, n) : n;
  if (n <= 0 || outer <= 0 || index_bytes == 0) return std::max<std::int64_t>(step, 1);
  const std::size_t tensor = static_cast<std::size_t>(outer * n) * index_bytes;
  const std::size_t target = std::min(slab_bytes, tensor / 8);
  auto aim = static_cast<std::int64_t>(target / (static_cast<std::size_t>(outer) * index_bytes));
  if (outer > 1) {
    aim = std::max(aim, static_cast<std::int64_t>((page_bytes() + index_bytes - 1) / index_bytes));
  }
  // A whole number of steps that is also a whole number of pages per run where the axis allows,
  // so that the pass can be direct (a 516-row MSA's column slab: 8 columns, not 7).
  const auto per_page =
      static_cast<std::int64_t>(page_bytes() / std::gcd(page_bytes(), index_bytes));
  std::int64_t unit = std::lcm(step, per_page);
  if (unit > n) unit = step;
  const std::int64_t units =
      std::max<std::int64_t>(1, at_most ? aim / unit : (aim + unit - 1) / unit);
  return std::min(n, units * unit);
}

// Staging buffers outlive their pass, for the next pass to take: a fresh one faults in each of
// its pages on first touch, which in a virtual machine was a large part of a streamed pass's own
// time. The pool keeps no more than the passes ever staged at once (free + staged <= that high
// mark), so it never holds memory the plan's spill window did not.
class StagingPool {
 public:
  Region take(std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->size() >= bytes && it->size() <= 2 * bytes &&
          (best == free_.end() || it->size() < best->size())) {
        best = it;
      }
    }
    Region r;
    if (best != free_.end()) {
      r = std::move(*best);
      free_.erase(best);
      free_bytes_ -= r.size();
    } else {
      r = dram_tier().allocate(bytes);
      // Huge pages: after each wide column pass empties the pool (drop_free), the next passes
      // populate theirs anew, and under a cgroup at its limit each 4 KiB page costs a fault and a
      // reclaim. At N = 256 with a quarter of its peak the outer product mean's row pass took
      // 5.0 s per iteration with 221 thousand such faults, 2.3 s with 650.
      ::madvise(r.data(), r.size(), MADV_HUGEPAGE);
      r.populate();  // one call instead of a fault per page
    }
    staged_ += r.size();
    high_ = std::max(high_, staged_);
    trim();
    return r;
  }
  // Frees the buffers no pass stages: a pass that stages slabs of its own size takes their room.
  void drop_free() {
    const std::lock_guard lock(mutex_);
    free_.clear();
    free_bytes_ = 0;
  }
  void give(Region r) {
    if (r.data() == nullptr) return;
    const std::lock_guard lock(mutex_);
    staged_ -= r.size();
    free_bytes_ += r.size();
    free_.push_back(std::move(r));
    trim();
  }

 private:
  // The oldest free buffers go while the pool holds more than kKept or the high mark allows.
  void trim() {
    while (!free_.empty() && (free_.size() > kKept || staged_ + free_bytes_ > high_)) {
      free_bytes_ -= free_.front().size();
      free_.erase(free_.begin());
    }
  }

  static constexpr std::size_t kKept = 8;  // two passes at once (the outer product mean's)
  std::mutex mutex_;
  std::vector<Region> free_;
  std::size_t free_bytes_ = 0, staged_ = 0, high_ = 0;
};

StagingPool& staging_pool() {
  dram_tier();  // constructed before the pool, so destroyed after the buffers it holds
  static StagingPool pool;
  return pool;
}

void transfer(bool write, int fd, std::byte* buffer, std::size_t bytes, std::size_t offset) {
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t got =
        write ? ::pwrite(fd, buffer + done, bytes - done, static_cast<off_t>(offset + done))
              : ::pread(fd, buffer + done, bytes - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw InputError(std::string("cannot ") + (write ? "write to" : "read from") +
                       " a spill file: " + (got < 0 ? std::strerror(errno) : "it ended early") +
                       "; pass --spill-dir a working device");
    }
    done += static_cast<std::size_t>(got);
  }
}

}  // namespace

SpillWindow::SpillWindow(const Tensor& t, int axis, std::int64_t step, Access access,
                         std::size_t whole_bytes, Sharing sharing)
    : t_(t), axis_(axis), access_(access) {
  if (axis < 0 || axis >= t.rank())
    throw InternalError("SpillWindow: no axis " + std::to_string(axis) + " in " + t.describe());
  n_ = t.dim(axis);
  slab_ = std::max<std::int64_t>(n_, 1);
  if (t.empty() || t.numel() == 0) return;
  const SpillMapping m = spill_mapping_at(t.data());
  if (m.fd < 0 || (whole_bytes > 0 ? whole_bytes : t.nbytes()) <= m.cache_bytes) return;
  // Dense from `axis` on (each run one contiguous block), and the axes before it one evenly
  // strided sequence of runs; another layout is not staged (the pass faults it in).
  std::int64_t dense = 1;
  for (int a = t.rank() - 1; a >= axis; --a) {
    if (t.dim(a) > 1 && t.stride(a) != dense) return;
    dense *= t.dim(a);
  }
  std::int64_t outer = 1, outer_stride = 0;
  if (axis > 0) {
    outer_stride = t.stride(axis - 1);
    for (int a = axis - 2; a >= 0; --a) {
      if (t.dim(a) > 1 && t.stride(a) != t.stride(a + 1) * t.dim(a + 1)) return;
    }
    for (int a = 0; a < axis; ++a) outer *= t.dim(a);
  }
  const auto elem = static_cast<std::int64_t>(dtype_size(t.dtype()));
  fd_ = m.fd;
  base_ = m.base;
  outer_ = outer;
  outer_stride_ = static_cast<std::size_t>(outer_stride * elem);
  index_bytes_ = static_cast<std::size_t>(dense / n_ * elem);
  set_slab(slab_indices(outer_, n_, index_bytes_, step));
  // Pages written through the mapping before this pass (an embedder, a module that is not
  // staged) would stay resident while mapped: unmapped once here, they leave with the slabs.
  const std::size_t from = file_offset(0, 0);
  spill_unmap(m, from, file_offset(outer_ - 1, n_) - from);
  // A read and a write of a slab in flight, each one request per run.
  std::unique_ptr<SpillQueue> queue;
  if (m.direct_fd >= 0 && runs_aligned()) {
    queue = std::make_unique<SpillQueue>(2 * static_cast<std::size_t>(outer_));
    if (!queue->available()) queue.reset();
  }
  const std::int64_t pooled_slab = slab_;
  const std::size_t wide = std::min(m.window_bytes / SpillQueue::kTags, kSoleSlabBytes);
  if (queue && sharing == Sharing::alone && wide > kSpillSlabBytes) {
    set_slab(std::max(pooled_slab, slab_indices(outer_, n_, index_bytes_, step, wide, true)));
    if (!runs_aligned()) set_slab(pooled_slab);
  }
  if (slab_ != pooled_slab) {
    // Direct I/O keeps no page cache: three staged slabs are all this pass holds, no more than
    // the plan's window, which counts a buffered pass's page cache. Not from the pool, whose
    // buffers fit other passes' slabs; the pool's idle buffers go first, to make room.
    staging_pool().drop_free();
    for (Region& r : staging_) {
      r = dram_tier().allocate(slab_bytes());
      // Huge pages: a pass's fresh buffers are populated in a fifth of the time.
      ::madvise(r.data(), r.size(), MADV_HUGEPAGE);
      r.populate();
    }
    pooled_ = false;
  } else {
    staging_[0] = staging_pool().take(slab_bytes());
    if (!queue) return;
    for (std::size_t b = 1; b < staging_.size(); ++b)
      staging_[b] = staging_pool().take(slab_bytes());
  }
  for (const Region& r : staging_) {
    if (reinterpret_cast<std::uintptr_t>(r.data()) % kDirectAlignment != 0) {
      return_staging();
      throw InternalError("a spill slab's staging buffer is not page-aligned");
    }
  }
  direct_fd_ = m.direct_fd;
  queue_ = std::move(queue);
  // Clean pages of the tensor left by writes through the mapping go now; dirty ones are
  // written back by the kernel before a direct read of their range.
  spill_drop_cached(m, from, file_offset(outer_ - 1, n_) - from);
}

bool SpillWindow::runs_aligned() const {
  const auto aligned = [](std::size_t bytes) { return bytes % kDirectAlignment == 0; };
  const std::size_t last = static_cast<std::size_t>(slab_length(slabs_ - 1)) * index_bytes_;
  // A request's result is an int: runs stay far below 2 GiB (slabs are a few MiB).
  const std::size_t run = static_cast<std::size_t>(slab_) * index_bytes_;
  return aligned(file_offset(0, 0)) && (outer_ == 1 || aligned(outer_stride_)) && aligned(run) &&
         aligned(last) && run <= (std::size_t{1} << 30);
}

void SpillWindow::queue_transfer(std::int64_t slab, bool write) {
  const std::size_t run = static_cast<std::size_t>(slab_length(slab)) * index_bytes_;
  std::byte* const into = buffer(slab);
  const int tag = static_cast<int>(slab % SpillQueue::kTags);
  for (std::int64_t o = 0; o < outer_; ++o) {
    std::byte* const b = into + static_cast<std::size_t>(o) * run;
    const std::size_t offset = file_offset(o, slab_begin(slab));
    if (write) {
      queue_->write(direct_fd_, fd_, b, run, offset, tag);
    } else {
      queue_->read(direct_fd_, fd_, b, run, offset, tag);
    }
  }
}

void SpillWindow::advance_direct(std::int64_t slab) {
  if (current_ >= 0 && access_ == Access::write) queue_transfer(current_, true);
  if (current_ < 0) queue_transfer(slab, false);  // the first: nothing read it ahead
  queue_->wait(static_cast<int>(slab % SpillQueue::kTags));
  current_ = slab;
  if (slab + 1 < slabs_) {
    // Its buffer last held the slab before the last, whose write has had a slab's compute.
    queue_->wait(static_cast<int>((slab + 1) % SpillQueue::kTags));
    queue_transfer(slab + 1, false);
    queue_->submit();
  }
}

SpillWindow::~SpillWindow() noexcept(false) {
  if (std::uncaught_exceptions() > 0) {
    try {
      finish();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the pass failed already; its error goes on
    }
    return_staging();
    return;
  }
  try {
    finish();
  } catch (...) {
    return_staging();
    throw;
  }
}

void SpillWindow::return_staging() {
  queue_.reset();  // waits for the requests in flight, which write into the buffers
  for (Region& r : staging_) {
    if (pooled_) {
      staging_pool().give(std::move(r));
    } else {
      r = Region();
    }
  }
}

void SpillWindow::set_slab(std::int64_t indices) {
  slab_ = indices;
  slabs_ = (n_ + slab_ - 1) / slab_;
}

std::size_t SpillWindow::slab_bytes() const {
  return static_cast<std::size_t>(outer_) * static_cast<std::size_t>(slab_) * index_bytes_;
}

std::int64_t SpillWindow::slab_length(std::int64_t slab) const {
  return std::min(slab_, n_ - slab_begin(slab));
}

std::size_t SpillWindow::file_offset(std::int64_t outer_index, std::int64_t axis_index) const {
  const auto* p = static_cast<const std::byte*>(t_.data()) +
                  static_cast<std::size_t>(outer_index) * outer_stride_ +
                  static_cast<std::size_t>(axis_index) * index_bytes_;
  return static_cast<std::size_t>(p - base_);
}

void SpillWindow::prefetch(std::int64_t slab) const {
  const std::size_t run = static_cast<std::size_t>(slab_length(slab)) * index_bytes_;
  // Only the slab's own runs: its span holds every other slab's too.
  const bool contiguous = outer_ == 1 || run == outer_stride_;
  const std::size_t bytes = contiguous ? run * static_cast<std::size_t>(outer_) : run;
  for (std::int64_t o = 0; o < (contiguous ? 1 : outer_); ++o)
    spill_prefetch({fd_, base_}, file_offset(o, slab_begin(slab)), bytes);
}

void SpillWindow::load(std::int64_t slab, std::byte* into) const {
  const std::size_t run = static_cast<std::size_t>(slab_length(slab)) * index_bytes_;
  for (std::int64_t o = 0; o < outer_; ++o) {
    transfer(false, fd_, into + static_cast<std::size_t>(o) * run, run,
             file_offset(o, slab_begin(slab)));
  }
}

void SpillWindow::store(std::int64_t slab, const std::byte* from) const {
  const std::size_t run = static_cast<std::size_t>(slab_length(slab)) * index_bytes_;
  for (std::int64_t o = 0; o < outer_; ++o) {
    transfer(true, fd_, const_cast<std::byte*>(from) + static_cast<std::size_t>(o) * run, run,
             file_offset(o, slab_begin(slab)));
  }
  // One call over the runs' span: the only dirty pages there are this slab's (and pages written
  // through the mapping before the pass, which may as well go now).
  const std::size_t begin = file_offset(0, slab_begin(slab));
  spill_write_behind({fd_, base_}, begin, file_offset(outer_ - 1, slab_begin(slab)) + run - begin);
}

void SpillWindow::release(std::int64_t slab) const {
  const std::size_t run = static_cast<std::size_t>(slab_length(slab)) * index_bytes_;
  const std::size_t begin = file_offset(0, slab_begin(slab));
  const std::size_t span = file_offset(outer_ - 1, slab_begin(slab)) + run - begin;
  const SpillMapping m{fd_, base_};
  if (access_ == Access::write) spill_wait_written(m, begin, span);
  // The span holds other slabs' runs too: their clean pages go as well, which costs nothing
  // (slabs read already are staged; the slab being read holds its pages while it copies them).
  spill_drop_cached(m, begin, span);
}

Tensor SpillWindow::at(std::int64_t begin, std::int64_t end) {
  if (begin < 0 || end > n_ || begin >= end) {
    throw InternalError("SpillWindow::at [" + std::to_string(begin) + ", " + std::to_string(end) +
                        ") outside an axis of " + std::to_string(n_));
  }
  if (!staged()) return t_.slice(axis_, begin, end);
  const std::int64_t slab = begin / slab_;
  if (end > slab_begin(slab) + slab_length(slab) || slab < current_ ||
      (current_ >= 0 && slab > current_ + 1)) {  // each slab is stored and released in turn
    throw InternalError("a spilled pass stepped across its slabs, back, or over one");
  }
  if (slab != current_ && direct()) advance_direct(slab);
  if (slab != current_) {
    if (current_ >= 0 && access_ == Access::write) store(current_, buffer(current_));
    load(slab, buffer(slab));  // read ahead while the slab before it computed
    if (outer_ == 1) {
      // Rows: the staged slab's pages go now (in a column pass they go with a span below).
      spill_drop_cached({fd_, base_}, file_offset(0, slab_begin(slab)),
                        static_cast<std::size_t>(slab_length(slab)) * index_bytes_);
    }
    // The slab stored before the last has had a slab's compute to reach the disk; a read
    // pass is done with the last. Dropping their spans also drops this slab's pages, now
    // staged, so the next slab is read ahead only after that.
    if (stored_ >= 0) release(stored_);
    stored_ = -1;
    if (current_ >= 0) {
      if (access_ == Access::write) {
        stored_ = current_;
      } else {
        release(current_);
      }
    }
    current_ = slab;
    if (slab + 1 < slabs_) prefetch(slab + 1);
  }
  // The view: the staged slab laid out [outer axes..., slab_length, inner axes...].
  Shape shape = t_.shape(), strides = t_.strides();
  shape[axis_] = end - begin;
  const std::int64_t length = slab_length(slab);
  if (axis_ > 0) {
    strides[axis_ - 1] = length * t_.stride(axis_);
    for (int a = axis_ - 2; a >= 0; --a) strides[a] = strides[a + 1] * t_.dim(a + 1);
  }
  std::byte* p = buffer(slab) + static_cast<std::size_t>(begin - slab_begin(slab)) * index_bytes_;
  return Tensor(p, t_.dtype(), shape, strides);
}

void SpillWindow::finish() {
  if (!staged() || finished_) return;
  finished_ = true;
  if (direct()) {
    if (current_ >= 0 && access_ == Access::write) queue_transfer(current_, true);
    for (int tag = 0; tag < SpillQueue::kTags; ++tag) queue_->wait(tag);
    return_staging();
    return;
  }
  if (current_ >= 0) {
    if (access_ == Access::write) store(current_, buffer(current_));
    if (stored_ >= 0) release(stored_);
    release(current_);
    if (current_ + 1 < slabs_) release(current_ + 1);  // read ahead
  }
  return_staging();
}

std::int64_t SpillWindow::default_slab_length(std::int64_t outer, std::int64_t n,
                                              std::size_t index_bytes, std::int64_t step) {
  return slab_indices(outer, n, index_bytes, step);
}

std::size_t SpillWindow::resident_bytes(std::int64_t outer, std::int64_t n, std::size_t index_bytes,
                                        std::int64_t step, Access access) {
  if (n <= 0 || outer <= 0) return 0;
  const std::int64_t slab = slab_indices(outer, n, index_bytes, step);
  const std::size_t page = page_bytes();
  const auto runs = static_cast<std::size_t>(outer);
  const std::size_t slab_bytes = runs * static_cast<std::size_t>(slab) * index_bytes;
  // Staged: one slab. In the page cache, measured at every step (tests/memory/
  // spill_window_test.cpp): up to three slabs (the one read ahead, the one whose write-back was
  // just started, the one whose write-back is being waited for; in a read pass over rows, the
  // kernel's own read-ahead past the one asked for), in a column pass that only reads two (the
  // one read ahead, the staged one's until the next is loaded); each run's pages spanning up to
  // a page more; never more than the tensor's pages.
  const std::size_t tensor = runs * static_cast<std::size_t>(n) * index_bytes + runs * page;
  const std::size_t cached = access == Access::read && outer > 1 ? 2 : 3;
  return slab_bytes + std::min(tensor, cached * (slab_bytes + runs * page));
}

}  // namespace cpufold
