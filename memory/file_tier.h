// The spill tier: storage in files mapped MAP_SHARED from a directory (SSD, any file system;
// on a DAX mount the mapping is persistent memory itself). Pages are written back to the file
// and can be dropped (Region::evict), so a region larger than the memory budget can be
// streamed through slab by slab.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "memory/tier.h"
#include "memory/unique_fd.h"

namespace cpufold {

// The spill file whose mapping holds `p` (any FileTier's): its descriptor and the start of
// its mapping, which is the file's offset 0. fd is -1 when p is not in a spill file.
struct SpillMapping {
  int fd = -1;
  const std::byte* base = nullptr;
  // The same file opened O_DIRECT (memory/spill_io.h); -1 where the file system refuses it.
  int direct_fd = -1;
  // A spilled tensor up to this size is left to the page cache between the passes of a block
  // rather than streamed (FileTier::set_cache_bytes).
  std::size_t cache_bytes = 0;
  // DRAM the run's plan grants the staged passes over the MSA representations (its spill window
  // for them, FileTier::set_window_bytes): a pass that is the only one open may stage slabs that
  // large (memory/spill_window.h).
  std::size_t window_bytes = 0;
};
SpillMapping spill_mapping_at(const void* p);

// Page operations on the bytes [offset, offset + bytes) of the spill file `m`, widened to whole
// pages. Advice is best effort; a write-back that fails throws InputError.
// Reads ahead into the page cache without waiting.
void spill_prefetch(const SpillMapping& m, std::size_t offset, std::size_t bytes);
// Starts writing the dirty pages back without waiting.
void spill_write_behind(const SpillMapping& m, std::size_t offset, std::size_t bytes);
// Waits for the write-back already started (spill_write_behind), starting none, so that a wide
// span can be waited for in one call whatever else it holds.
void spill_wait_written(const SpillMapping& m, std::size_t offset, std::size_t bytes);
// Unmaps the pages from this process (the data stays in the page cache and the file), so that
// dropping them from the page cache later is possible.
void spill_unmap(const SpillMapping& m, std::size_t offset, std::size_t bytes);
// Drops the clean pages no process maps from the page cache; dirty pages and pages under
// write-back stay.
void spill_drop_cached(const SpillMapping& m, std::size_t offset, std::size_t bytes);

class FileTier final : public Tier {
 public:
  // Throws InputError unless `dir` is an existing directory where files can be created.
  explicit FileTier(std::filesystem::path dir);
  ~FileTier() override;

  const std::string& name() const override { return name_; }  // "file:<dir>"
  const std::filesystem::path& dir() const { return dir_; }
  // DRAM the run's plan leaves over (its budget less its peak, plus its spill window): a spilled
  // tensor that fits is paged by the kernel within a block, written back and dropped after it,
  // instead of being streamed pass by pass (memory/spill_window.h). 0 (default): stream all.
  void set_cache_bytes(std::size_t bytes) { cache_bytes_.store(bytes); }
  // The DRAM the run's plan counts for the slabs of the spilled MSA representations being read
  // or written (its spill window for them). 0 (default): passes stage slabs of the default size
  // only.
  void set_window_bytes(std::size_t bytes) { window_bytes_.store(bytes); }

 protected:
  // One unnamed file per region, its blocks reserved up front: a full disk is a BudgetError
  // here, never a SIGBUS on some later write.
  std::byte* map(std::size_t bytes) override;
  void unmap(std::byte* data, std::size_t bytes) override;
  void evict(std::byte* base, std::size_t offset, std::size_t bytes) override;

 private:
  std::filesystem::path dir_;
  std::string name_;
  std::mutex mutex_;
  struct File {
    UniqueFd fd, direct;  // direct: O_DIRECT, or none
  };
  std::map<const std::byte*, File> files_;  // by mapping address
  std::atomic<std::size_t> cache_bytes_{0};
  std::atomic<std::size_t> window_bytes_{0};
};

}  // namespace cpufold
