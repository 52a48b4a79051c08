#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>

#include "memory/error.h"
#include "memory/unique_fd.h"

namespace cpufold {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempMarker = ".tmp.";

std::string errno_text(int err) {
  return std::strerror(err);
}

// The directory a relative or absolute path lives in ("." for a bare file name).
fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// Writes every byte, retrying short writes and EINTR. Returns 0 or an errno value.
int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// fsync of the directory makes the rename itself durable. File systems that cannot sync a
// directory report EINVAL; the rename has happened and nothing more can be done there.
int sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err == EINVAL ? 0 : err;
}

// The PID in ".NAME.tmp.PID", or -1 when the name is not one of our temporaries.
pid_t temporary_owner(const std::string& name) {
  if (name.empty() || name.front() != '.') return -1;
  const auto marker = name.rfind(kTempMarker);
  if (marker == std::string::npos || marker == 0) return -1;
  const char* begin = name.data() + marker + kTempMarker.size();
  const char* end = name.data() + name.size();
  pid_t pid = -1;
  const auto [ptr, ec] = std::from_chars(begin, end, pid);
  if (ec != std::errc() || ptr != end || pid <= 0) return -1;
  return pid;
}

bool process_alive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace

std::size_t temporary_name_overhead() {
  return 1 + kTempMarker.size() + std::to_string(std::numeric_limits<pid_t>::max()).size();
}

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  write_file_atomically(path, std::span<const std::string_view>(&bytes, 1));
}

void write_file_atomically(const fs::path& path, std::span<const std::string_view> pieces) {
  write_file_atomically(path, [&](const PieceWriter& write) {
    for (const std::string_view piece : pieces) write(piece);
  });
}

void write_file_atomically(const fs::path& path,
                           const std::function<void(const PieceWriter&)>& produce) {
  const fs::path dir = directory_of(path);
  std::string tmp_name = ".";  // built by appending: GCC 12 misreports "." + std::string
  tmp_name += path.filename().string();
  tmp_name += kTempMarker;
  tmp_name += std::to_string(::getpid());
  const fs::path tmp = dir / tmp_name;
  const auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    throw InputError("cannot write " + path.string() + ": " + what + ": " + errno_text(err));
  };

  const UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (!fd) {
    const int err = errno;
    throw InputError("cannot write " + path.string() + ": cannot create " + tmp.string() + ": " +
                     errno_text(err));
  }
  // Small pieces are gathered into writes of about this size; large ones go straight out.
  constexpr std::size_t kBuffer = std::size_t{64} << 10;
  std::string buffer;
  int err = 0;
  const auto flush = [&] {
    if (err == 0 && !buffer.empty()) err = write_all(fd.get(), buffer);
    buffer.clear();
  };
  try {
    produce([&](std::string_view piece) {
      if (buffer.size() + piece.size() > kBuffer) flush();
      if (piece.size() >= kBuffer) {
        if (err == 0) err = write_all(fd.get(), piece);
      } else {
        buffer.append(piece);
      }
    });
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  flush();
  if (err == 0 && ::fsync(fd.get()) != 0) err = errno;
  if (err != 0) fail("writing " + tmp.string(), err);

  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("renaming " + tmp.string(), errno);
  if ((err = sync_directory(dir)) != 0) {
    throw InputError("cannot write " + path.string() + ": syncing directory " + dir.string() +
                     ": " + errno_text(err));
  }
}

std::size_t remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return 0;  // nothing there yet
  std::size_t removed = 0;
  for (const fs::directory_entry& entry : it) {
    if (!entry.is_regular_file(ec)) continue;
    const pid_t owner = temporary_owner(entry.path().filename().string());
    // A live owner (another instance writing into the same directory) keeps its file.
    if (owner < 0 || process_alive(owner)) continue;
    if (fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace cpufold
