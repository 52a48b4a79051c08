// Shared helpers for cpufold tests: data locations, scratch directories, running the CLI.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

namespace cpufold::testing {

// tests/data in the source tree (small files committed with the code).
std::filesystem::path test_data_dir();

// The directory named by CPUFOLD_REFERENCE_DIR, or nullopt when the variable is unset.
// When it is set, `require_reference_file` FAILS the test (never skips) if a file is missing.
std::optional<std::filesystem::path> reference_dir();
std::filesystem::path require_reference_file(const std::filesystem::path& relative);

// ../shared/tools/memlimit beside CPUFOLD_REFERENCE_DIR, when it is there and this machine
// lets it create memory cgroups; nullopt otherwise (tests that need it skip that part).
std::optional<std::filesystem::path> memlimit_tool();

// The value of `field` ("Rss:", "VmFlags:") in /proc/self/smaps for the mapping that holds
// `p`, without the field name; fails the test and returns "" when no mapping holds p.
std::string smaps_field(const void* p, const std::string& field);

// A fresh directory under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the built `cpufold` binary with `args` (shell-quoted by the caller) and captures output.
CommandResult run_cpufold(const std::string& args);
// Runs a shell command; stdout and stderr together.
CommandResult run_command(const std::string& command);
// `path` as one shell word for run_cpufold's arguments (paths here hold no single quote).
std::string shell_word(const std::filesystem::path& path);

// AddressSanitizer reserves terabytes of address space for its shadow memory, so a binary
// built with it cannot start under `ulimit -v`: tests of address-space limits skip there.
inline constexpr bool kAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif
#define CPUFOLD_SKIP_UNDER_ASAN_ULIMIT()                                                   \
  do {                                                                                     \
    if (::cpufold::testing::kAddressSanitizer)                                             \
      GTEST_SKIP() << "ulimit -v cannot be tested under AddressSanitizer (shadow memory)"; \
  } while (0)

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Writes `bytes` to `path` verbatim.
void write_file(const std::filesystem::path& path, const std::string& bytes);
std::string read_file(const std::filesystem::path& path);

// The message of the `E` that `fn` throws; fails the test when it throws nothing (an exception
// of another type propagates and fails it too).
template <typename E, typename Fn>
std::string thrown_message(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

}  // namespace cpufold::testing
