#include "io/cache_location.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace cpufold {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

std::vector<fs::path> cache_directories(const fs::path& source) {
  if (const std::string dir = env("CPUFOLD_CACHE_DIR"); !dir.empty()) return {fs::path(dir)};
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path absolute = fs::absolute(source, ec);
  if (!ec) dirs.push_back(absolute.parent_path() / "cpufold-cache");
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
    dirs.push_back(fs::path(xdg) / "cpufold");
  } else if (const std::string home = env("HOME"); !home.empty()) {
    dirs.push_back(fs::path(home) / ".cache" / "cpufold");
  }
  return dirs;
}

bool writable_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

}  // namespace cpufold
