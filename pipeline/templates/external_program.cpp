#include "pipeline/templates/external_program.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "memory/error.h"

extern char** environ;

namespace cpufold {
namespace fs = std::filesystem;

namespace {

// The last `lines` lines of a text file (empty when it cannot be read).
std::string tail_of(const fs::path& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) all.push_back(line);
  }
  std::string out;
  const std::size_t first = all.size() > static_cast<std::size_t>(lines) ? all.size() - lines : 0;
  for (std::size_t i = first; i < all.size(); ++i) out += "\n  " + all[i];
  return out;
}

// The full path of `program` on PATH, or empty when it is not there.
fs::path find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? fs::path(program) : fs::path();
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

void run_program(const std::string& program, const std::vector<std::string>& args,
                 const fs::path& log_dir, const std::string& package) {
  const fs::path exe = find_on_path(program);
  if (exe.empty()) {
    throw InputError(program + " was not found on PATH: install it (Debian: apt-get install " +
                     package + ")");
  }
  const fs::path out_path = log_dir / (program + ".stdout");
  const fs::path err_path = log_dir / (program + ".stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> owned{exe.string()};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    throw InputError("cannot start " + exe.string() + ": " + std::strerror(spawned));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw InputError("waiting for " + program + ": " + std::strerror(errno));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    throw InputError(program + " was killed by signal " + std::to_string(sig) +
                     (sig == SIGKILL ? " (SIGKILL: most often the kernel's out-of-memory killer; "
                                       "give the search more memory)"
                                     : std::string(" (") + strsignal(sig) + ")") +
                     tail_of(err_path, 5));
  }
  if (WEXITSTATUS(status) != 0) {
    throw InputError(program + " failed (exit status " + std::to_string(WEXITSTATUS(status)) +
                     "); its last messages:" + tail_of(err_path, 5));
  }
}

}  // namespace cpufold
