#include "pipeline/search/msa_search.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>

#include "io/a3m.h"
#include "io/atomic_file.h"
#include "io/stockholm.h"
#include "memory/error.h"
#include "pipeline/search/external_program.h"
#include "pipeline/search/mmseqs_search.h"
#include "pipeline/search/msa_tools.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

constexpr const char* kScratchPrefix = ".cpufold-search.tmp.";

std::string format_seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  return buffer;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// This run's scratch directory, removed with everything in it when the search ends.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const fs::path& msa_dir)
      : path_(msa_dir / (kScratchPrefix + std::to_string(::getpid()))) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    fs::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Rows of a written MSA; a file that does not parse is the tool's failure.
std::size_t msa_depth(const fs::path& file, const std::string& tool) {
  try {
    const Msa msa = file.extension() == ".sto" ? read_stockholm(file) : read_a3m(file);
    return msa.sequences.size();
  } catch (const InputError& e) {
    throw ExternalProgramError(tool + " wrote an MSA that cannot be read: " + e.what());
  }
}

// Puts a finished file in place: flushed to disk, then renamed (same file system).
void move_into_place(const fs::path& from, const fs::path& to) {
  const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  fs::create_directories(to.parent_path());
  fs::rename(from, to);
}

int tool_threads(int requested, int af2_default) {
  if (requested > 0) return requested;
  return std::max(1, std::min(af2_default, available_cpus()));
}

std::vector<SearchedFile> search_af2_layout(const SearchQuery& query, const SearchPlan& plan,
                                            const SearchOptions& options, const fs::path& scratch,
                                            const std::string& tag) {
  const fs::path msas = options.msa_dir / query.name / "msas";
  std::vector<SearchedFile> files;
  const fs::path query_fasta = scratch / "query.fasta";
  bool query_written = false;
  for (const MsaSearchStep& step : plan.steps) {
    SearchedFile f;
    f.path = msas / step.output;
    std::error_code ec;
    if (fs::is_regular_file(f.path, ec)) {
      f.skipped = true;
      files.push_back(f);
      continue;
    }
    if (!query_written) {
      write_file_atomically(query_fasta, ">" + query.name + "\n" + query.sequence + "\n");
      query_written = true;
    }
    const fs::path out = scratch / step.output;
    const bool jackhmmer = step.tool == SearchTool::jackhmmer;
    ExternalProgram program =
        jackhmmer ? jackhmmer_program(query_fasta, step.databases.front(), out,
                                      tool_threads(options.threads, kAf2JackhmmerCpus))
                  : hhblits_program(query_fasta, step.databases, out,
                                    tool_threads(options.threads, kAf2HhblitsCpus));
    program.stdout_file = scratch / (step.output + ".log");
    program.stderr_file = scratch / (step.output + ".err");
    if (options.say) {
      options.say(tag + ": " + program.argv.front() + " on " + step.label + " -> " + step.output +
                  " ...");
    }
    const ProgramOutput ran = run_program(program);
    if (!fs::is_regular_file(out, ec)) {
      throw ExternalProgramError(program.argv.front() + " exited 0 but wrote no " +
                                 out.filename().string() + ": " + text_tail(ran.err));
    }
    f.depth = msa_depth(out, program.argv.front());
    f.seconds = ran.seconds;
    move_into_place(out, f.path);
    if (options.say) {
      options.say(tag + ": " + step.output + ": " + std::to_string(f.depth) + " sequences in " +
                  format_seconds(f.seconds));
    }
    files.push_back(f);
  }
  return files;
}

}  // namespace

void remove_stale_search_scratch(const fs::path& msa_dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(msa_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kScratchPrefix, 0) != 0) continue;
    const std::string pid_text = name.substr(std::string(kScratchPrefix).size());
    const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      fs::remove_all(e.path(), ec);
    }
  }
}

std::vector<fs::path> search_outputs(const SearchPlan& plan, const fs::path& msa_dir,
                                     const std::string& name) {
  if (plan.method == SearchMethod::mmseqs2) return {msa_dir / (name + ".a3m")};
  std::vector<fs::path> out;
  for (const MsaSearchStep& step : plan.steps) out.push_back(msa_dir / name / "msas" / step.output);
  return out;
}

SearchSummary search_msas(const std::vector<SearchQuery>& queries, const SearchPlan& plan,
                          const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (plan.method == SearchMethod::mmseqs2) require_program("mmseqs", "mmseqs2");
  for (const MsaSearchStep& step : plan.steps) {
    if (step.tool == SearchTool::jackhmmer) require_program("jackhmmer", "hmmer");
    if (step.tool == SearchTool::hhblits) require_program("hhblits", "hhsuite");
  }
  fs::create_directories(options.msa_dir);
  remove_stale_search_scratch(options.msa_dir);
  SearchSummary summary;
  summary.files.resize(queries.size());
  const ScratchDirectory scratch(options.msa_dir);
  const std::size_t n = queries.size();
  const std::size_t of = options.of > 0 ? options.of : n;
  const auto tag = [&](std::size_t i) {
    return "search " + std::to_string(options.first + i + 1) + "/" + std::to_string(of) + " " +
           queries[i].name;
  };

  if (plan.method == SearchMethod::mmseqs2) {
    std::vector<MmseqsQuery> pending;
    std::vector<std::size_t> pending_index;
    for (std::size_t i = 0; i < n; ++i) {
      SearchedFile f;
      f.path = options.msa_dir / (queries[i].name + ".a3m");
      std::error_code ec;
      if (fs::is_regular_file(f.path, ec)) {
        f.skipped = true;
        ++summary.skipped;
        if (options.say) options.say(tag(i) + ": " + f.path.filename().string() + " exists, kept");
      } else {
        pending.push_back({queries[i].sequence, f.path});
        pending_index.push_back(i);
      }
      summary.files[i].push_back(f);
    }
    if (!pending.empty()) {
      if (options.say) {
        options.say("search: mmseqs2 on " + std::to_string(pending.size()) + " quer" +
                    (pending.size() == 1 ? "y" : "ies") + " (ColabFold's steps)");
      }
      const auto batch_start = std::chrono::steady_clock::now();
      run_colabfold_search(pending, plan.colabfold, scratch.path() / "mmseqs",
                           tool_threads(options.threads, 32), options.say);
      const double seconds = seconds_since(batch_start);
      for (std::size_t i : pending_index) {
        SearchedFile& f = summary.files[i].front();
        f.depth = msa_depth(f.path, "mmseqs");
        f.seconds = seconds / static_cast<double>(pending.size());
        ++summary.searched;
        if (options.say) {
          options.say(tag(i) + ": " + f.path.filename().string() + ": " + std::to_string(f.depth) +
                      " sequences");
        }
      }
    }
    summary.seconds = seconds_since(start);
    return summary;
  }

  for (std::size_t i = 0; i < n; ++i) {
    const fs::path job_scratch = scratch.path() / std::to_string(i);
    fs::create_directories(job_scratch);
    summary.files[i] = search_af2_layout(queries[i], plan, options, job_scratch, tag(i));
    const bool all_skipped = std::all_of(summary.files[i].begin(), summary.files[i].end(),
                                         [](const SearchedFile& f) { return f.skipped; });
    if (all_skipped) {
      ++summary.skipped;
      if (options.say) options.say(tag(i) + ": every MSA exists, kept");
    } else {
      ++summary.searched;
    }
    std::error_code ec;
    fs::remove_all(job_scratch, ec);
  }
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace cpufold
