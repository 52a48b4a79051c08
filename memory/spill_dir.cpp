#include "memory/spill_dir.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "memory/error.h"

namespace cpufold {
namespace {

std::string quoted(const std::filesystem::path& dir) {
  return std::string("'").append(dir.string()).append("'");  // GCC 12 -Wrestrict on "'" + ...
}

InputError cannot_create(const std::filesystem::path& dir, int err) {
  return InputError("cannot create a file in the spill directory " + quoted(dir) + ": " +
                    std::strerror(err) +
                    "; pass --spill-dir a directory on a writable file system with free space");
}

}  // namespace

std::size_t spill_free_bytes(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    throw InputError("cannot read the free space of the spill directory " + quoted(dir) + ": " +
                     std::strerror(errno));
  }
  return static_cast<std::size_t>(st.f_bavail) * st.f_frsize;
}

bool spill_dir_in_memory(const std::filesystem::path& dir) {
  struct statfs st {};
  if (::statfs(dir.c_str(), &st) != 0) return false;
  return st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC;
}

std::string spill_dir_unused_reason(const std::filesystem::path& dir) {
  return "--spill-dir " + dir.string() +
         " is in memory (tmpfs or ramfs): spilling there would free nothing, so no plan spills "
         "to it; give a directory on a local SSD or a DAX mount";
}

void require_spill_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status)) {
    throw InputError("the spill directory " + quoted(dir) +
                     " does not exist; create it (mkdir -p) or pass --spill-dir an existing "
                     "directory");
  }
  if (!std::filesystem::is_directory(status)) {
    throw InputError("the spill directory " + quoted(dir) +
                     " is not a directory; pass --spill-dir a directory");
  }
  create_unnamed_file(dir);  // the one reliable test of writability (root ignores modes)
}

UniqueFd create_unnamed_file(const std::filesystem::path& dir) {
  // O_EXCL: the file can never be given a name (linkat), so it cannot outlive the process.
  UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
  if (fd) return fd;
  // EOPNOTSUPP: the file system lacks O_TMPFILE; EISDIR / EINVAL: the kernel does.
  if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
    return create_named_then_unlinked_file(dir);
  }
  throw cannot_create(dir, errno);
}

UniqueFd create_named_then_unlinked_file(const std::filesystem::path& dir) {
  const std::string pattern = (dir / "cpufold-spill-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd) throw cannot_create(dir, errno);
  // Unlinked at once: only a crash between these two calls can leave the name behind.
  if (::unlink(name.data()) != 0) throw cannot_create(dir, errno);
  return fd;
}

}  // namespace cpufold
