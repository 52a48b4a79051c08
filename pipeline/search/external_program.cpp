#include "pipeline/search/external_program.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "io/child_process.h"

extern char** environ;

namespace cpufold {
namespace {

namespace fs = std::filesystem;

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The OOM kills counted by this process's cgroup (cgroup v2 memory.events); -1 when unknown.
long cgroup_oom_kills() {
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  }
  if (path.empty()) return -1;
  std::ifstream events("/sys/fs/cgroup" + path + "/memory.events");
  std::string key;
  long value = 0;
  while (events >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return -1;
}

// A file descriptor for one output stream: the named file, or an anonymous memory file to
// read back. Closed by the destructor.
struct OutputStream {
  int fd = -1;
  bool captured = false;
  ~OutputStream() {
    if (fd >= 0) ::close(fd);
  }
  void open(const fs::path& file, const char* name) {
    if (file.empty()) {
      fd = ::memfd_create(name, MFD_CLOEXEC);
      captured = true;
    } else {
      fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
      throw InputError((file.empty() ? std::string(name) : file.string()) +
                       ": cannot open for a program's output: " + std::strerror(errno));
    }
  }
  std::string read_back() const {
    if (!captured) return {};
    std::string text;
    char buffer[65536];
    off_t offset = 0;
    for (;;) {
      const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
      offset += n;
    }
    return text;
  }
};

std::string read_file_tail(const fs::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(max_bytes)
                                   ? size - static_cast<std::streamoff>(max_bytes)
                                   : 0;
  in.seekg(start);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

}  // namespace

fs::path find_on_path(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? fs::path(name) : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (is_executable_file(candidate)) return candidate;
  }
  return {};
}

std::string text_tail(const std::string& text, std::size_t max_lines, std::size_t max_bytes) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  std::size_t start = end;
  std::size_t lines = 0;
  while (start > 0 && lines < max_lines && end - start < max_bytes) {
    --start;
    if (text[start] == '\n') ++lines;
  }
  if (start < end && text[start] == '\n') ++start;
  std::string tail;
  std::istringstream in(text.substr(start, end - start));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    tail += (tail.empty() ? "" : " | ") + line;
  }
  return tail;
}

void require_program(const std::string& name, const std::string& package) {
  if (!find_on_path(name).empty()) return;
  std::string message = name + ": program not found on PATH";
  if (!package.empty()) {
    message += "; install the Debian package '" + package + "' (apt-get install " + package +
               ") or put " + name + " on PATH";
  }
  throw InputError(message);
}

ProgramOutput run_program(const ExternalProgram& program) {
  if (program.argv.empty()) throw InternalError("run_program: no program given");
  const std::string& name = program.argv.front();
  require_program(name, program.package);
  const fs::path executable = find_on_path(name);
  // Everything the child needs is made before fork: after it only async-signal-safe calls.
  std::vector<std::string> owned_args = program.argv;
  owned_args.front() = executable.string();
  std::vector<char*> argv;
  for (std::string& a : owned_args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> owned_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : program.environment) replaced = replaced || k == key;
    if (!replaced) owned_env.push_back(entry);
  }
  for (const auto& [k, v] : program.environment) owned_env.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : owned_env) envp.push_back(e.data());
  envp.push_back(nullptr);
  OutputStream out, err;
  out.open(program.stdout_file, "stdout");
  err.open(program.stderr_file, "stderr");
  const std::string working_dir = program.working_dir.string();
  const long oom_kills_before = cgroup_oom_kills();
  const auto start = std::chrono::steady_clock::now();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    prepare_forked_child(parent);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::dup2(out.fd, STDOUT_FILENO);
    ::dup2(err.fd, STDERR_FILENO);
    if (!working_dir.empty() && ::chdir(working_dir.c_str()) != 0) ::_exit(126);
    ::execve(argv.front(), argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) {
    throw InternalError(std::string("cannot start ") + name + ": " + std::strerror(errno));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProgramOutput result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.out = out.read_back();
  result.err = err.captured ? err.read_back() : read_file_tail(program.stderr_file, 4096);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return result;

  const std::string command = command_line(program.argv);
  const std::string stderr_tail =
      result.err.empty() ? std::string() : "; the end of its stderr: " + text_tail(result.err);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGKILL) {
      const long oom_kills_after = cgroup_oom_kills();
      const bool counted = oom_kills_before >= 0 && oom_kills_after > oom_kills_before;
      throw BudgetError(
          name + " was killed by SIGKILL: " +
          (counted ? "it ran out of memory (this cgroup's OOM killer counted the kill)"
                   : "it most likely ran out of memory (the OOM killer), or was killed by hand") +
          "; give it more memory or search with fewer threads. Command: " + command);
    }
    throw ExternalProgramError(
        name + " was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
        (sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT ? ": it crashed" : "") +
        ". Command: " + command + stderr_tail);
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 126 && !working_dir.empty() && !fs::is_directory(program.working_dir)) {
    throw InputError(working_dir + ": not a directory to run " + name + " in");
  }
  throw ExternalProgramError(name + " failed with exit status " + std::to_string(code) +
                             ". Command: " + command + stderr_tail);
}

}  // namespace cpufold
