// An exclusive flock on a directory for a scope: the critical section of processes that update
// files in one directory (a read-merge-write of timings.json, the check of who uses an output
// directory). Without one (the directory cannot be opened) the scope runs unlocked.
#pragma once

#include <filesystem>

#include "memory/unique_fd.h"

namespace cpufold {

class DirectoryLock {
 public:
  explicit DirectoryLock(const std::filesystem::path& dir);
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  UniqueFd fd_;  // closing it releases the lock
};

}  // namespace cpufold
