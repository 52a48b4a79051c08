#include "pipeline/batch/profile_children.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "pipeline/batch/profile_record.h"

extern char** environ;

namespace cpufold {
namespace {

struct ChildRun {
  std::string output;  // stdout and stderr together
  int status = 0;      // waitpid's
};

// Closes a descriptor when the scope ends.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

ChildRun run_child(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw InternalError(std::string("profile: cannot make a pipe: ") + std::strerror(errno));
  Fd read_end{fds[0]}, write_end{fds[1]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, STDERR_FILENO);
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> owned{exe};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw InternalError("profile: cannot start " + exe + ": " + std::strerror(spawned));
  write_end.close();

  ChildRun run;
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(read_end.fd, buf, sizeof buf);
    if (got > 0) {
      run.output.append(buf, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The child's last "error:" message (its report_failure line), else its last line.
std::string child_message(const std::vector<std::string_view>& lines) {
  std::string_view last;
  for (std::string_view line : lines) {
    if (line.starts_with(kProfilePlanTag) || line.starts_with(kProfileResultTag) || line.empty())
      continue;
    last = line;
    for (std::string_view marker : {": error: ", ": internal error: "}) {
      if (const std::size_t at = line.find(marker); at != std::string_view::npos) {
        last = line.substr(at + marker.size());
        break;
      }
    }
  }
  return std::string(last);
}

ProfiledLength outcome(const ChildRun& run, const ProfileSizes& sizes) {
  const std::vector<std::string_view> lines = lines_of(run.output);
  ProfiledLength out;
  out.profile.sizes = sizes;
  for (std::string_view line : lines) {
    if (auto plan = parse_profile_record(kProfilePlanTag, line)) out.profile = *plan;
    if (auto result = parse_profile_record(kProfileResultTag, line)) out.profile = *result;
  }
  if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0 && out.profile.ok) return out;
  out.profile.ok = false;
  const std::string message = child_message(lines);
  if (WIFSIGNALED(run.status)) {
    const int sig = WTERMSIG(run.status);
    out.exit_code = sig == SIGKILL ? 4 : 5;
    out.profile.error = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                        (sig == SIGKILL ? ": out of memory (an OOM killer)?" : "");
  } else {
    out.exit_code =
        WIFEXITED(run.status) && WEXITSTATUS(run.status) != 0 ? WEXITSTATUS(run.status) : 5;
    out.profile.error = message.empty() ? "the child process ended without a result" : message;
  }
  return out;
}

}  // namespace

std::vector<ProfiledLength> profile_in_children(
    std::span<const std::int64_t> lengths, const ProfileSizes& sizes,
    const std::function<std::vector<std::string>(std::int64_t n_res)>& child_args,
    const std::function<void(const ProfiledLength&, std::size_t index)>& done) {
  std::vector<ProfiledLength> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    ProfileSizes expected = sizes;
    expected.n_res = lengths[i];
    out.push_back(outcome(run_child(child_args(lengths[i])), expected));
    if (done) done(out.back(), i);
  }
  return out;
}

std::string profile_progress_line(const ProfiledLength& p, std::size_t index, std::size_t count) {
  const LengthProfile& l = p.profile;
  char head[96];
  std::snprintf(head, sizeof head, "[%zu/%zu] N_res %lld: ", index + 1, count,
                static_cast<long long>(l.sizes.n_res));
  std::string line = head;
  const std::string chunk = describe_chunk_sizes(l.chunks);
  if (l.ok) {
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "ratio %.3f", l.ratio());
    double seconds = 0;
    for (const StagePeak& s : l.stages) seconds += s.seconds;
    char time[32];
    std::snprintf(time, sizeof time, "%.1f s", seconds);
    return line + "predicted " + format_bytes(l.predicted_peak_bytes) + " (" + chunk +
           "), measured " + format_bytes(l.measured_peak_bytes) + ", " + ratio + "; " + time;
  }
  line += "FAILED: " + l.error;
  if (l.planned) line += " (predicted " + format_bytes(l.predicted_peak_bytes) + ", " + chunk + ")";
  return line;
}

}  // namespace cpufold
