// A private temporary directory for one tool run, removed with everything in it when the
// object goes away (so a failed search leaves nothing behind).
#pragma once

#include <filesystem>

namespace cpufold {

class ScratchDirectory {
 public:
  // A new directory "cpufold-PURPOSE-XXXXXX" under $TMPDIR (else /tmp). InputError when it
  // cannot be made.
  explicit ScratchDirectory(const char* purpose);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace cpufold
