#include "pipeline/batch/output_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/directory_lock.h"
#include "memory/error.h"
#include "pipeline/batch/predict.h"

namespace cpufold {
namespace {

using Json = nlohmann::ordered_json;

bool try_flock(int fd, int operation) {
  for (;;) {
    if (::flock(fd, operation | LOCK_NB) == 0) return true;
    if (errno != EINTR) return false;
  }
}

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (off_t at = 0;;) {
    const ssize_t got = ::pread(fd, buffer, sizeof buffer, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
    at += got;
  }
}

void write_all(int fd, const std::string& text) {
  if (::ftruncate(fd, 0) != 0) return;  // the content is a courtesy; the lock is the flock
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t put = ::pwrite(fd, text.data() + at, text.size() - at, static_cast<off_t>(at));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return;
    at += static_cast<std::size_t>(put);
  }
}

// "num_recycles 3 here, 1 there; ..." for the settings that differ.
std::string differences(const Json& mine, const Json& theirs) {
  std::string out;
  for (const auto& [key, value] : mine.items()) {
    const Json other = theirs.contains(key) ? theirs[key] : Json();
    if (other == value) continue;
    out +=
        (out.empty() ? "" : "; ") + key + " " + value.dump() + " here, " + other.dump() + " there";
  }
  for (const auto& [key, value] : theirs.items()) {
    if (!mine.contains(key)) out += (out.empty() ? "" : "; ") + key + " only there";
  }
  return out.empty() ? "the settings differ" : out;
}

}  // namespace

OutputDirLock::OutputDirLock(const std::filesystem::path& dir, const std::string& settings) {
  const std::filesystem::path file = job_logs_dir(dir) / kOutputLockName;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);  // open() says what went wrong
  // Deciding who holds the lock, and converting an exclusive lock into a shared one, happen
  // under the directory's lock, so no other run sees the moment between the two.
  const DirectoryLock guard(dir);
  fd_ = UniqueFd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd_) {
    throw InputError(file.string() + ": cannot open the output directory's lock (" +
                     std::strerror(errno) + ")");
  }
  const Json mine = Json::parse(settings);
  if (try_flock(fd_.get(), LOCK_EX)) {
    // No run holds it: this run's settings become the directory's.
    write_all(fd_.get(), Json{{"pid", ::getpid()}, {"settings", mine}}.dump(2) + "\n");
    if (!try_flock(fd_.get(), LOCK_SH)) throw InternalError("cannot share the output lock");
    return;
  }
  const Json holder = Json::parse(read_all(fd_.get()), nullptr, false);
  const Json theirs =
      holder.is_object() && holder.contains("settings") ? holder["settings"] : Json::object();
  if (theirs == mine && try_flock(fd_.get(), LOCK_SH)) return;
  const std::string pid =
      holder.is_object() && holder.contains("pid") ? " (process " + holder["pid"].dump() + ")" : "";
  throw InputError(dir.string() + " is in use by another cpufold predict" + pid +
                   " with other settings (" + differences(mine, theirs) +
                   "); wait until it ends or give another OUTPUT_DIR (runs with the same "
                   "settings, such as the shards of one batch, may share it)");
}

}  // namespace cpufold
