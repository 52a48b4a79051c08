#include "io/file_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "io/atomic_file.h"
#include "io/cache_location.h"
#include "io/content_hash.h"
#include "memory/error.h"
#include "memory/unique_fd.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kReadBytes = std::size_t{4} << 20;
constexpr std::string_view kRecordHeader = "cpufold file identity 1\n";
// A record is kept only when the file's ctime is this much older than the start of its
// hashing: a write later in the same clock tick could otherwise leave the ctime unchanged.
constexpr std::int64_t kCtimeTickNs = 100'000'000;

std::int64_t ns_of(const timespec& t) {
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// What must not change for a stored hash to stay valid.
std::string stat_line(const struct stat& st) {
  std::ostringstream line;
  line << "dev " << st.st_dev << " ino " << st.st_ino << " size " << st.st_size << " mtime "
       << ns_of(st.st_mtim) << " ctime " << ns_of(st.st_ctim) << "\n";
  return line.str();
}

struct stat stat_of(int fd, const fs::path& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw InputError("cannot read " + file.string() + ": " + std::strerror(errno));
  return st;
}

std::string hash_of(int fd, const fs::path& file) {
  ContentHash hash;
  std::vector<char> buffer(kReadBytes);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError("cannot read " + file.string() + ": " + std::strerror(errno));
    if (got == 0) break;
    hash.add(buffer.data(), static_cast<std::size_t>(got));
  }
  return "xxh3-128:" + hash.hex();
}

// The record's name: one per canonical path (different copies of a file each have one).
std::string record_name(const fs::path& canonical) {
  const XXH64_hash_t h = XXH3_64bits(canonical.c_str(), canonical.native().size());
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return canonical.filename().string() + "." + text + ".identity";
}

// Everything a record holds before the hash.
std::string record_head(const fs::path& canonical, const struct stat& st) {
  return std::string(kRecordHeader) + "path " + canonical.string() + "\n" + stat_line(st);
}

// The hash a record holds for exactly this path and stat, else "".
std::string recorded_hash(const fs::path& record, const fs::path& canonical,
                          const struct stat& st) {
  std::ifstream in(record);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const std::string expected_head = record_head(canonical, st);
  if (s.size() <= expected_head.size() || s.compare(0, expected_head.size(), expected_head) != 0)
    return {};
  std::string hash = s.substr(expected_head.size());
  if (hash.back() != '\n') return {};
  hash.pop_back();
  if (hash.rfind("xxh3-128:", 0) != 0 || hash.size() != 9 + 32) return {};
  return hash;
}

}  // namespace

std::string file_content_hash(const fs::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw InputError("cannot open " + file.string() + ": " + std::strerror(errno));
  const struct stat before = stat_of(fd.get(), file);
  if (!S_ISREG(before.st_mode)) throw InputError(file.string() + " is not a regular file");
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  const std::vector<fs::path> dirs = ec ? std::vector<fs::path>{} : cache_directories(file);
  const std::string name = record_name(canonical);
  for (const fs::path& dir : dirs) {
    if (std::string hash = recorded_hash(dir / name, canonical, before); !hash.empty()) return hash;
  }

  const std::int64_t start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  const std::string hash = hash_of(fd.get(), file);
  const struct stat after = stat_of(fd.get(), file);
  if (stat_line(after) != stat_line(before))
    throw InputError(file.string() + " changed while it was read; try again once it is complete");
  if (ns_of(before.st_ctim) + kCtimeTickNs > start_ns) return hash;  // too fresh to remember
  for (const fs::path& dir : dirs) {
    if (!writable_directory(dir)) continue;
    try {
      write_file_atomically(dir / name, record_head(canonical, before) + hash + "\n");
    } catch (const InputError&) {
      continue;  // only a cost: the next run hashes the file again
    }
    break;
  }
  return hash;
}

}  // namespace cpufold
