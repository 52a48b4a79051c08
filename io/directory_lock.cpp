#include "io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

namespace cpufold {

DirectoryLock::DirectoryLock(const std::filesystem::path& dir)
    : fd_(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (!fd_) return;
  while (::flock(fd_.get(), LOCK_EX) != 0 && errno == EINTR) {
  }
}

}  // namespace cpufold
