#include "memory/spill_io.h"

#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "memory/error.h"

namespace cpufold {

struct SpillQueue::Ring {
  io_uring ring{};
  ~Ring() { io_uring_queue_exit(&ring); }
};

namespace {

// Plain pread/pwrite of the whole range; errno on failure, 0 when done.
int transfer_buffered(bool write, int fd, std::byte* buffer, std::size_t bytes,
                      std::size_t offset) {
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t got =
        write ? ::pwrite(fd, buffer + done, bytes - done, static_cast<off_t>(offset + done))
              : ::pread(fd, buffer + done, bytes - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return EIO;  // the file ended early
    done += static_cast<std::size_t>(got);
  }
  return 0;
}

unsigned ring_entries(std::size_t capacity) {
  unsigned entries = 8;
  while (entries < capacity && entries < 1024) entries *= 2;
  return entries;
}

}  // namespace

SpillQueue::SpillQueue(std::size_t capacity) {
  auto ring = std::make_unique<Ring>();
  const unsigned entries = ring_entries(capacity);
  if (io_uring_queue_init(entries, &ring->ring, 0) != 0) return;  // refused: buffered I/O
  ring_ = std::move(ring);
  // In flight at most what the completion queue (twice the submission queue) holds.
  const std::size_t slots = std::min<std::size_t>(std::max<std::size_t>(capacity, 1), 2 * entries);
  slots_.resize(slots);
  free_.reserve(slots);
  for (std::size_t s = slots; s-- > 0;) free_.push_back(s);
}

SpillQueue::~SpillQueue() {
  drain();
}

void SpillQueue::read(int direct_fd, int fd, std::byte* buffer, std::size_t bytes,
                      std::size_t offset, int tag) {
  queue({false, fd, buffer, bytes, offset, tag}, direct_fd);
}

void SpillQueue::write(int direct_fd, int fd, const std::byte* buffer, std::size_t bytes,
                       std::size_t offset, int tag) {
  // io_uring's write takes a const source; the slot keeps one pointer type for both directions.
  queue({true, fd, const_cast<std::byte*>(buffer), bytes, offset, tag}, direct_fd);
}

void SpillQueue::queue(const Request& r, int direct_fd) {
  if (!available()) throw InternalError("SpillQueue used without an io_uring");
  while (free_.empty()) {
    submit();
    reap(1);
  }
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_->ring);
  if (sqe == nullptr) {  // the submission queue is full: hand it over and take another entry
    submit();
    sqe = io_uring_get_sqe(&ring_->ring);
    if (sqe == nullptr) throw InternalError("io_uring gave no submission entry after a submit");
  }
  const std::size_t slot = free_.back();
  free_.pop_back();
  slots_[slot] = r;
  const auto bytes = static_cast<unsigned>(r.bytes);
  const auto offset = static_cast<__u64>(r.offset);
  if (r.write) {
    io_uring_prep_write(sqe, direct_fd, r.buffer, bytes, offset);
  } else {
    io_uring_prep_read(sqe, direct_fd, r.buffer, bytes, offset);
  }
  io_uring_sqe_set_data64(sqe, slot);
  ++in_flight_[static_cast<std::size_t>(r.tag)];
  ++unsubmitted_;
}

void SpillQueue::submit() {
  if (unsubmitted_ == 0) return;
  int got = 0;
  while ((got = io_uring_submit(&ring_->ring)) == -EINTR || got == -EAGAIN) {
    if (got == -EAGAIN) reap(1);  // the kernel is short of room: let requests finish
  }
  if (got < 0) {
    throw InputError(std::string("cannot queue I/O on a spill file: ") + std::strerror(-got) +
                     "; pass --spill-dir a working device");
  }
  unsubmitted_ -= std::min(unsubmitted_, static_cast<std::size_t>(got));
}

void SpillQueue::reap(std::size_t want) {
  // One wake-up for `want` completions, not one per request: a column slab is hundreds.
  io_uring_cqe* cqe = nullptr;
  int err = 0;
  const auto n = static_cast<unsigned>(std::clamp<std::size_t>(want, 1, slots_.size()));
  while ((err = io_uring_wait_cqe_nr(&ring_->ring, &cqe, n)) == -EINTR) {
  }
  if (err != 0 || cqe == nullptr) {
    throw InputError(std::string("cannot wait for I/O on a spill file: ") + std::strerror(-err));
  }
  while (io_uring_peek_cqe(&ring_->ring, &cqe) == 0 && cqe != nullptr) {
    const auto slot = static_cast<std::size_t>(io_uring_cqe_get_data64(cqe));
    const int result = cqe->res;
    io_uring_cqe_seen(&ring_->ring, cqe);
    complete(slot, result);
  }
}

void SpillQueue::complete(std::size_t slot, int result) {
  const Request r = slots_[slot];
  // Short, or an alignment this device does not take: the rest through the page cache.
  if (result == -EINVAL || (result >= 0 && static_cast<std::size_t>(result) < r.bytes)) {
    const std::size_t done = result > 0 ? static_cast<std::size_t>(result) : 0;
    result = transfer_buffered(r.write, r.fd, r.buffer + done, r.bytes - done, r.offset + done);
    result = result == 0 ? static_cast<int>(r.bytes) : -result;
  }
  if (result < 0 && error_ == 0) error_ = -result;
  --in_flight_[static_cast<std::size_t>(r.tag)];
  free_.push_back(slot);
}

void SpillQueue::wait(int tag) {
  if (!available()) return;
  submit();
  while (in_flight_[static_cast<std::size_t>(tag)] > 0)
    reap(in_flight_[static_cast<std::size_t>(tag)]);
  if (error_ != 0) {
    throw InputError(std::string("cannot read or write a spill file: ") + std::strerror(error_) +
                     "; pass --spill-dir a working device");
  }
}

void SpillQueue::drain() noexcept {
  if (!available()) return;
  try {
    submit();
    for (int tag = 0; tag < kTags; ++tag) {
      while (in_flight_[static_cast<std::size_t>(tag)] > 0)
        reap(in_flight_[static_cast<std::size_t>(tag)]);
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): unwinding already; the pass's result is lost
  }
}

}  // namespace cpufold
