// The spill tier: storage in files mapped MAP_SHARED from a directory (SSD, any file system;
// on a DAX mount the mapping is persistent memory itself). Pages are written back to the file
// and can be dropped (Region::evict), so a region larger than the memory budget can be
// streamed through slab by slab.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "memory/tier.h"
#include "memory/unique_fd.h"

namespace cpufold {

class FileTier final : public Tier {
 public:
  // Throws InputError unless `dir` is an existing directory where files can be created.
  explicit FileTier(std::filesystem::path dir);
  ~FileTier() override;

  const std::string& name() const override { return name_; }  // "file:<dir>"
  const std::filesystem::path& dir() const { return dir_; }

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
  std::map<const std::byte*, UniqueFd> files_;  // by mapping address
};

}  // namespace cpufold
