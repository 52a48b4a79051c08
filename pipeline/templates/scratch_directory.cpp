#include "pipeline/templates/scratch_directory.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "memory/error.h"

namespace cpufold {

ScratchDirectory::ScratchDirectory(const char* purpose) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string name = (base / ("cpufold-" + std::string(purpose) + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw InputError("cannot make a temporary directory under " + base.string() + ": " +
                     std::strerror(errno) + " (set TMPDIR to a writable directory)");
  }
  path_ = name;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cpufold
