#include "pipeline/batch/worker_process.h"

#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>

#include "io/child_process.h"
#include "memory/error.h"

extern char** environ;

namespace cpufold {

pid_t start_worker(const WorkerSpec& spec) {
  // Everything the child needs is made before fork: after it only async-signal-safe calls.
  std::vector<std::string> owned{"/proc/self/exe"};
  owned.insert(owned.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (unsigned c : spec.slot.cpus) CPU_SET(c, &cpus);
  std::array<unsigned long, 16> nodemask{};
  const int node = spec.slot.numa_node;
  const bool bind = node >= 0 && node < static_cast<int>(nodemask.size() * 8 * sizeof(long));
  if (bind) nodemask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
  const std::string output = spec.output.string();
  const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) {
    throw InputError(output + ": cannot open the worker's log: " + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    prepare_forked_child(parent);
    if (!spec.slot.cpus.empty()) ::sched_setaffinity(0, sizeof cpus, &cpus);
    if (bind) ::syscall(SYS_set_mempolicy, MPOL_BIND, nodemask.data(), nodemask.size() * 64);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execve("/proc/self/exe", argv.data(), environ);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(out);
  if (pid < 0)
    throw InternalError(std::string("cannot start a worker: ") + std::strerror(fork_errno));
  return pid;
}

std::optional<WorkerExit> reap_worker() {
  WorkerExit w;
  rusage usage{};
  for (;;) {
    w.pid = ::wait4(-1, &w.status, WNOHANG, &usage);
    if (w.pid < 0 && errno == EINTR) continue;
    break;
  }
  if (w.pid <= 0) return std::nullopt;
  w.max_rss_bytes = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  return w;
}

bool killed_by_signal(int status) {
  return WIFSIGNALED(status);
}

int exit_code_of(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string why = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (sig == SIGKILL) why += ": out of memory (an OOM killer) or killed by hand";
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT) why += ": a crash";
    return why;
  }
  return "exit " + std::to_string(exit_code_of(status));
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw(std::istreambuf_iterator<char>(in), {});
  std::vector<std::string> args;
  std::string current;
  for (char c : raw) {
    if (c == '\0') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) args.push_back(current);
  return args;
}

std::vector<std::string> without_options(const std::vector<std::string>& args,
                                         const std::vector<std::string>& drop,
                                         const std::vector<std::string>& drop_flags) {
  const auto named = [](const std::vector<std::string>& names, const std::string& a) {
    return std::find(names.begin(), names.end(), a) != names.end();
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {  // positionals follow
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const std::size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (named(drop_flags, name)) continue;
    if (named(drop, name)) {
      if (eq == std::string::npos) ++i;  // its value is the next argument
      continue;
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace cpufold
