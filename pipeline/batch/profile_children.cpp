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

// Runs the child to its end; `on_line` sees each line of its output as it comes (a block of a
// blocks-only child can take many minutes: its progress is not held back until the end).
ChildRun run_child(const std::vector<std::string>& args,
                   const std::function<void(std::string_view line)>& on_line) {
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
  std::size_t line_start = 0;  // of the first line not yet seen by on_line
  for (;;) {
    const ssize_t got = ::read(read_end.fd, buf, sizeof buf);
    if (got > 0) {
      run.output.append(buf, static_cast<std::size_t>(got));
      for (std::size_t end; (end = run.output.find('\n', line_start)) != std::string::npos;) {
        on_line(std::string_view(run.output).substr(line_start, end - line_start));
        line_start = end + 1;
      }
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
    if (line.starts_with(kProfilePlanTag) || line.starts_with(kProfileResultTag) ||
        line.starts_with(kProfileBlockTag) || line.empty())
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
    // The blocks that ended before a child failed keep their measurements.
    if (auto block = parse_profile_block_record(line)) {
      for (ProfiledBlock& b : out.profile.block_runs) {
        if (b.name == block->name) b = *block;
      }
    }
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
    const std::function<void(const ProfiledBlock&, std::int64_t n_res, std::size_t index)>&
        block_done,
    const std::function<void(const ProfiledLength&, std::size_t index)>& done) {
  std::vector<ProfiledLength> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    ProfileSizes expected = sizes;
    expected.n_res = lengths[i];
    const auto on_line = [&](std::string_view line) {
      if (!block_done) return;
      if (auto block = parse_profile_block_record(line)) block_done(*block, lengths[i], i);
    };
    out.push_back(outcome(run_child(child_args(lengths[i]), on_line), expected));
    if (done) done(out.back(), i);
  }
  return out;
}

namespace {

std::string progress_head(std::size_t index, std::size_t count, std::int64_t n_res) {
  char head[96];
  std::snprintf(head, sizeof head, "[%zu/%zu] N_res %lld: ", index + 1, count,
                static_cast<long long>(n_res));
  return head;
}

std::string ratio_text(double ratio) {
  char text[64];
  std::snprintf(text, sizeof text, "ratio %.3f", ratio);
  return text;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

}  // namespace

std::string profile_progress_line(const ProfiledLength& p, std::size_t index, std::size_t count) {
  const LengthProfile& l = p.profile;
  std::string line = progress_head(index, count, l.sizes.n_res);
  std::string chunk = describe_chunk_sizes(l.chunks);
  // Blocks-only, the prediction is a block's: the whole run's plan is said beside it.
  if (l.blocks_only) chunk += "; whole-run plan " + format_bytes(l.plan_peak_bytes);
  const std::string what = l.blocks_only ? "larger block predicted " : "predicted ";
  if (l.ok) {
    double seconds = 0;
    for (const StagePeak& s : l.stages) seconds += s.seconds;
    return line + what + format_bytes(l.predicted_peak_bytes) + " (" + chunk + "), measured " +
           format_bytes(l.measured_peak_bytes) + ", " + ratio_text(l.ratio()) + "; " +
           seconds_text(seconds);
  }
  line += "FAILED: " + l.error;
  if (l.planned) line += " (" + what + format_bytes(l.predicted_peak_bytes) + ", " + chunk + ")";
  return line;
}

std::string profile_block_progress_line(const ProfiledBlock& b, std::int64_t n_res,
                                        std::size_t index, std::size_t count) {
  return progress_head(index, count, n_res) + profile_block_title(b.name) + " (" +
         std::to_string(b.n_seq) + " rows, chunk " + std::to_string(b.chunk) + "): predicted " +
         format_bytes(b.predicted.total()) + ", measured " + format_bytes(b.measured_peak_bytes) +
         ", " + ratio_text(b.ratio()) + "; " + seconds_text(b.seconds);
}

}  // namespace cpufold
