// Memory tiers: where the planner places storage. DRAM here; a file-backed mmap tier (SSD or
// fs-dax pmem, memory/file_tier.h) and a far NUMA node (memory/numa_tier.h) implement the same
// interface, so callers that hold a Tier& never change when a tier is added.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cpufold {

class Tier;

// Move-only ownership of one block of tier storage, released to its tier on destruction.
class Region {
 public:
  Region() = default;
  Region(Tier* tier, std::byte* data, std::size_t size) : tier_(tier), data_(data), size_(size) {}
  Region(Region&& o) noexcept { *this = std::move(o); }
  Region& operator=(Region&& o) noexcept;
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region() { reset(); }

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  Tier* tier() const { return tier_; }
  void reset();
  // Drops the resident pages of [offset, offset + bytes) once their contents are safe in the
  // tier's backing store, so that streaming through a large region slab by slab keeps about
  // one slab resident. The contents stay (the next access reads them back); no-op for DRAM.
  void evict(std::size_t offset, std::size_t bytes) const;
  // Faults in every page now (DRAM only; no-op on the other tiers, whose pages come from their
  // backing store), so that a timed pass does not pay the first touch a long run pays once.
  void populate() const;

 private:
  Tier* tier_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

class Tier {
 public:
  static constexpr std::size_t kAlignment = 64;

  virtual ~Tier() = default;
  // Short stable name used in peak reports ("dram", "file:/mnt/pmem0", ...).
  virtual const std::string& name() const = 0;
  // Storage of at least `bytes`, aligned to kAlignment, zero-filled. Throws BudgetError when
  // the tier cannot provide it.
  Region allocate(std::size_t bytes);

 protected:
  virtual std::byte* map(std::size_t bytes) = 0;
  virtual void unmap(std::byte* data, std::size_t bytes) = 0;
  // [offset, offset + bytes) of the region mapped at `base`, checked to lie inside it.
  virtual void evict(std::byte* base, std::size_t offset, std::size_t bytes);
  virtual void populate(std::byte* data, std::size_t bytes);

 private:
  friend class Region;
  void release(std::byte* data, std::size_t bytes);
};

// Anonymous private pages from the OS (page aligned, zero-filled, lazily committed).
class DramTier final : public Tier {
 public:
  const std::string& name() const override { return name_; }

 protected:
  std::byte* map(std::size_t bytes) override;
  void unmap(std::byte* data, std::size_t bytes) override;
  void populate(std::byte* data, std::size_t bytes) override;

 private:
  std::string name_ = "dram";
};

// The process-wide DRAM tier.
DramTier& dram_tier();

}  // namespace cpufold
