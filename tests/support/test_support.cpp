#include "tests/support/test_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace cpufold::testing {

std::string smaps_field(const void* p, const std::string& field) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind(field, 0) == 0) return line.substr(field.size());
  }
  ADD_FAILURE() << "no mapping holds " << p << " or it has no " << field;
  return "";
}

std::filesystem::path test_data_dir() {
  return CPUFOLD_TEST_DATA_DIR;
}

std::optional<std::filesystem::path> reference_dir() {
  const char* dir = std::getenv("CPUFOLD_REFERENCE_DIR");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  return std::filesystem::path(dir);
}

std::filesystem::path require_reference_file(const std::filesystem::path& relative) {
  auto dir = reference_dir();
  if (!dir) return {};
  std::filesystem::path p = *dir / relative;
  if (!std::filesystem::exists(p)) {
    ADD_FAILURE() << "CPUFOLD_REFERENCE_DIR is set but " << p << " does not exist";
    return {};
  }
  return p;
}

std::optional<std::filesystem::path> memlimit_tool() {
  const auto ref = reference_dir();
  if (!ref) return std::nullopt;
  const auto tool = ref->parent_path() / "tools" / "memlimit";
  if (!std::filesystem::exists(tool)) return std::nullopt;
  if (run_command(std::string("'").append(tool.string()).append("' 64M true")).exit_code != 0)
    return std::nullopt;
  return tool;
}

ScratchDir::ScratchDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("cpufold-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult run_cpufold(const std::string& args) {
  return run_command(std::string("'") + CPUFOLD_BINARY + "' " + args);
}

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string shell_word(const std::filesystem::path& path) {
  std::string word = "'";
  word += path.string();
  return word + "'";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cpufold::testing
