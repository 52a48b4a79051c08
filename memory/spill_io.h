// Asynchronous reads and writes of a spill file that bypass the page cache: O_DIRECT requests
// handed to the kernel through io_uring (liburing), so that a staged pass (memory/
// spill_window.h) reads its next slab and writes its last one while it computes, costs the
// compute threads no copies and no page-cache bookkeeping, and leaves no pages that other
// instances on the node need. A column pass's slab is hundreds of short runs; io_uring takes
// them in one call and the device serves them in parallel.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace cpufold {

// The alignment O_DIRECT asks of offsets, lengths and buffers here: a page, the largest logical
// block of common devices.
inline constexpr std::size_t kDirectAlignment = 4096;

class SpillQueue {
 public:
  // Requests are counted under one of kTags tags (a pass's staging buffers).
  static constexpr int kTags = 3;

  // Room for `capacity` requests in flight at once. available() is false when the kernel
  // refuses an io_uring (disabled by sysctl or a seccomp filter): the caller uses buffered I/O.
  explicit SpillQueue(std::size_t capacity);
  // Waits for every request in flight: none may land in memory freed after it.
  ~SpillQueue();
  SpillQueue(const SpillQueue&) = delete;
  SpillQueue& operator=(const SpillQueue&) = delete;

  bool available() const { return ring_ != nullptr; }
  // Queues a transfer of `bytes` at `offset` of `direct_fd` (opened O_DIRECT) into or from
  // `buffer` under `tag`. A request the device refuses (EINVAL: an alignment it does not take) or
  // leaves short is redone with plain pread/pwrite on `fd`, the same file without O_DIRECT.
  void read(int direct_fd, int fd, std::byte* buffer, std::size_t bytes, std::size_t offset,
            int tag);
  void write(int direct_fd, int fd, const std::byte* buffer, std::size_t bytes, std::size_t offset,
             int tag);
  // Hands what was queued to the kernel.
  void submit();
  // Waits until every request under `tag` has completed; an I/O error throws InputError.
  void wait(int tag);
  // Waits for every request; errors are dropped (for unwinding).
  void drain() noexcept;

 private:
  struct Request {
    bool write = false;
    int fd = -1;
    std::byte* buffer = nullptr;
    std::size_t bytes = 0, offset = 0;
    int tag = 0;
  };
  struct Ring;
  void queue(const Request& r, int direct_fd);
  // Waits until `want` completions (at least one) are ready, then settles every ready one.
  void reap(std::size_t want);
  void complete(std::size_t slot, int result);

  std::unique_ptr<Ring> ring_;
  std::vector<Request> slots_;
  std::vector<std::size_t> free_;  // unused slots
  std::array<std::size_t, kTags> in_flight_{};
  std::size_t unsubmitted_ = 0;
  int error_ = 0;  // the first failed request's errno
};

}  // namespace cpufold
