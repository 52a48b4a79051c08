// Deterministic mutation fuzzer for cpufold's inputs. Seeds (FASTA, A3M, Stockholm, CSV, TSV
// files) are mutated with a seeded generator and fed in-process to every parser and to job
// discovery, then a sample of mutated files is run through the real `cpufold predict`.
// Any exception but InputError, any broken invariant, a signal or a hang is a finding; its
// input is saved for replay. Exit status 0: no finding, 1: findings, 2: bad usage.
//
//   cpufold_fuzz [--iterations N] [--seed S] [--e2e N] [--out DIR] [--cpufold BIN]
//                [--data DIR] [--replay FILE] [--keep] SEED_FILE_OR_DIR...
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "io/stockholm.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/mutator.h"

namespace cpufold::fuzz {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::size_t iterations = 20000;
  std::uint64_t seed = 1;
  std::size_t e2e = 40;
  fs::path out = "fuzz-out";
  fs::path cpufold;
  fs::path data;
  fs::path replay;
  bool keep = false;  // keep every e2e run's directory, not only the findings'
  std::vector<fs::path> seeds;
};

struct SeedInput {
  std::string bytes;
  std::string ext;  // ".fasta", ".a3m", ".sto", ".csv", ".tsv"
};

// ---- crash and hang reports: the input in flight is written from the signal handler ----

const char* g_input = nullptr;
std::size_t g_input_size = 0;
char g_crash_path[4096] = {};

void write_fd(int fd, const char* s) {
  ssize_t ignored = ::write(fd, s, std::strlen(s));
  (void)ignored;
}

extern "C" void on_fatal_signal(int sig) {
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, g_input, g_input_size);
    (void)ignored;
    ::close(fd);
  }
  write_fd(2, sig == SIGALRM ? "\nfuzz: FINDING: an input hangs (over 20 s); saved to "
                             : "\nfuzz: FINDING: an input crashes with a signal; saved to ");
  write_fd(2, g_crash_path);
  write_fd(2, "\n");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers(const fs::path& out) {
  std::strncpy(g_crash_path, (out / "crash-input.bin").c_str(), sizeof g_crash_path - 1);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM})
    ::signal(sig, on_fatal_signal);
}

// ---- seeds ----

bool is_input_extension(const std::string& ext) {
  return ext == ".fasta" || ext == ".fa" || ext == ".a3m" || ext == ".sto" || ext == ".csv" ||
         ext == ".tsv";
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<SeedInput> load_seeds(const std::vector<fs::path>& paths) {
  std::vector<fs::path> files;
  for (const fs::path& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& entry : fs::recursive_directory_iterator(p)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::cerr << "fuzz: no seed file or directory " << p << "\n";
    }
  }
  std::sort(files.begin(), files.end());  // the same order, hence the same run, everywhere
  std::vector<SeedInput> seeds;
  for (const fs::path& f : files) {
    std::string ext = f.extension().string();
    if (!is_input_extension(ext) || fs::file_size(f) > (1 << 20)) continue;
    if (ext == ".fa") ext = ".fasta";
    seeds.push_back({read_bytes(f), ext});
  }
  return seeds;
}

// ---- findings ----

class Findings {
 public:
  explicit Findings(fs::path out) : out_(std::move(out)) {}

  void add(const std::string& phase, std::size_t index, const Finding& f, const std::string& ext,
           std::string_view input) {
    ++count_;
    // One reproducer and report per distinct message (numbers aside): a bug is usually hit
    // many times.
    const std::string key = f.target + ": " + f.what.substr(0, 120);
    std::string kind = key;
    for (char& c : kind) {
      if (c >= '0' && c <= '9') c = '#';
    }
    if (++seen_[kind] > 1) return;
    const fs::path file = out_ / (phase + "-" + std::to_string(index) + "-" + f.target + ext);
    write_bytes(file, input);
    std::cerr << "fuzz: FINDING (" << phase << " #" << index << ") " << key
              << "\n      reproducer: " << file.string() << "\n";
  }

  void add_e2e(std::size_t index, const std::string& what, const fs::path& dir) {
    ++count_;
    std::cerr << "fuzz: FINDING (e2e #" << index << ") " << what
              << "\n      inputs and output kept in " << dir.string() << "\n";
  }

  std::size_t count() const { return count_; }
  std::size_t distinct() const { return seen_.size(); }

 private:
  fs::path out_;
  std::size_t count_ = 0;
  std::map<std::string, std::size_t> seen_;
};

// Feeds one input to everything in-process.
std::vector<Finding> run_all(const std::string& input, const std::string& ext,
                             const fs::path& work) {
  g_input = input.data();
  g_input_size = input.size();
  ::alarm(20);
  std::vector<Finding> found = run_parsers(input);
  const fs::path file = work / ("input" + ext);
  write_bytes(file, input);
  for (Finding& f : run_discovery(file)) found.push_back(std::move(f));
  ::alarm(0);
  return found;
}

// ---- `cpufold predict` on mutated files ----

struct RunResult {
  bool timed_out = false;
  int status = 0;
};

RunResult run_predict(const Options& o, const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv = {o.cpufold.string(), "predict"};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const char* a : {"--data", o.data.c_str(), "--model-order", "1", "--num-models", "1",
                        "--num-recycle", "0", "--threads", "1", "--msa-mode", "single_sequence"}) {
    argv.emplace_back(a);
  }
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  RunResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (::waitpid(pid, &result.status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &result.status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return result;
}

void run_e2e(const Options& o, const std::vector<SeedInput>& seeds,
             const std::vector<std::string>& corpus, Random& random, Findings& findings,
             std::size_t& exit0, std::size_t& exit2) {
  // Small inputs (a mutated query of thousands of residues would only measure the model)
  // and fewer mutations, so that more runs get past the parsers into the batch.
  const MutationLimits limits{16 << 10, 400, 2};
  for (std::size_t k = 0; k < o.e2e; ++k) {
    const SeedInput& seed = seeds[random.below(seeds.size())];
    std::string input = seed.bytes;
    mutate(input, corpus, random, limits);
    const fs::path dir = o.out / ("e2e-" + std::to_string(k));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::vector<std::string> args;
    if (seed.ext == ".sto") {
      // A Stockholm file is an MSA: fold its seed's query with the mutated file as its MSA.
      std::string query = "MKTAYIAK";
      try {
        query = parse_stockholm(seed.bytes, "seed").sequences.front();
      } catch (const std::exception&) {
      }
      write_bytes(dir / "q.fasta", ">q\n" + query + "\n");
      fs::create_directories(dir / "msas");
      write_bytes(dir / "msas" / "q.sto", input);
      args = {(dir / "q.fasta").string(), (dir / "out").string(), "--msa-dir",
              (dir / "msas").string()};
    } else if (k % 5 == 4) {
      // A directory of two mutated files.
      const SeedInput& other = seeds[random.below(seeds.size())];
      std::string second = other.bytes;
      mutate(second, corpus, random, limits);
      fs::create_directories(dir / "in");
      write_bytes(dir / "in" / ("a" + seed.ext), input);
      write_bytes(dir / "in" / ("b" + (other.ext == ".sto" ? ".a3m" : other.ext)), second);
      args = {(dir / "in").string(), (dir / "out").string()};
    } else {
      write_bytes(dir / ("input" + seed.ext), input);
      args = {(dir / ("input" + seed.ext)).string(), (dir / "out").string()};
    }
    const RunResult r = run_predict(o, args, dir / "output.txt");
    std::string problem;
    if (r.timed_out) {
      problem = "cpufold predict did not finish in 120 s";
    } else if (WIFSIGNALED(r.status)) {
      problem = "cpufold predict died of signal " + std::to_string(WTERMSIG(r.status));
    } else if (WEXITSTATUS(r.status) != 0 && WEXITSTATUS(r.status) != 2) {
      problem = "cpufold predict exited with " + std::to_string(WEXITSTATUS(r.status));
    }
    if (!problem.empty()) {
      findings.add_e2e(k, problem, dir);
      continue;
    }
    (WEXITSTATUS(r.status) == 0 ? exit0 : exit2) += 1;
    if (!o.keep) fs::remove_all(dir);
  }
}

// Reproducers of an earlier run in the same --out would read as this run's findings. Only
// the names this program writes are removed.
void clear_earlier_findings(const fs::path& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* prefix : {"input-", "replay-", "e2e-", "crash-input.bin", "work"}) {
      if (name.rfind(prefix, 0) == 0) fs::remove_all(entry.path(), ec);
    }
  }
}

int usage(const std::string& message) {
  std::cerr << "cpufold_fuzz: " << message
            << "\nusage: cpufold_fuzz [--iterations N] [--seed S] [--e2e N] [--out DIR] "
               "[--cpufold BIN] [--data DIR] [--replay FILE] [--keep] SEED_FILE_OR_DIR...\n";
  return 2;
}

int fuzz_main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--iterations") {
      o.iterations = std::stoull(value());
    } else if (arg == "--seed") {
      o.seed = std::stoull(value());
    } else if (arg == "--e2e") {
      o.e2e = std::stoull(value());
    } else if (arg == "--out") {
      o.out = value();
    } else if (arg == "--cpufold") {
      o.cpufold = value();
    } else if (arg == "--data") {
      o.data = value();
    } else if (arg == "--replay") {
      o.replay = value();
    } else if (arg == "--keep") {
      o.keep = true;
    } else if (arg.rfind("--", 0) == 0) {
      return usage("unknown option " + arg);
    } else {
      o.seeds.emplace_back(arg);
    }
  }
  clear_earlier_findings(o.out);
  fs::create_directories(o.out / "work");
  install_handlers(o.out);
  Findings findings(o.out);

  if (!o.replay.empty()) {  // one saved input, every in-process target
    const std::string input = read_bytes(o.replay);
    std::string ext = o.replay.extension().string();
    if (!is_input_extension(ext)) ext = ".fasta";
    for (const Finding& f : run_all(input, ext, o.out / "work"))
      findings.add("replay", 0, f, ext, input);
    std::cerr << "fuzz: replayed " << o.replay.string() << ": " << findings.count()
              << " finding(s)\n";
    return findings.count() == 0 ? 0 : 1;
  }

  const std::vector<SeedInput> seeds = load_seeds(o.seeds);
  if (seeds.empty()) return usage("no seed inputs (.fasta .fa .a3m .sto .csv .tsv) found");
  if (o.e2e > 0 && (o.cpufold.empty() || o.data.empty())) {
    return usage("--e2e runs need --cpufold BIN and --data DIR (or pass --e2e 0)");
  }
  std::vector<std::string> corpus;
  for (const SeedInput& s : seeds) corpus.push_back(s.bytes);

  Random random(o.seed);
  const auto start = std::chrono::steady_clock::now();
  std::size_t total_bytes = 0;
  for (std::size_t i = 0; i < o.iterations; ++i) {
    const SeedInput& seed = seeds[random.below(seeds.size())];
    std::string input = seed.bytes;
    mutate(input, corpus, random, MutationLimits{});
    // A quarter of the inputs go to discovery under another input type's extension.
    static const char* kExts[] = {".fasta", ".a3m", ".csv", ".tsv"};
    const std::string ext =
        random.one_in(4) ? kExts[random.below(4)] : (seed.ext == ".sto" ? ".fasta" : seed.ext);
    total_bytes += input.size();
    for (const Finding& f : run_all(input, ext, o.out / "work")) {
      findings.add("input", i, f, ext, input);
    }
  }
  const double in_process_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "fuzz: " << o.iterations << " mutated inputs (" << total_bytes / 1024
            << " KiB) from " << seeds.size() << " seeds, seed " << o.seed << ", in-process in "
            << static_cast<int>(in_process_seconds + 0.5) << " s\n";

  std::size_t exit0 = 0, exit2 = 0;
  if (o.e2e > 0) {
    const auto e2e_start = std::chrono::steady_clock::now();
    run_e2e(o, seeds, corpus, random, findings, exit0, exit2);
    std::cerr
        << "fuzz: " << o.e2e << " cpufold predict runs: " << exit0 << " exit 0, " << exit2
        << " exit 2, in "
        << static_cast<int>(
               std::chrono::duration<double>(std::chrono::steady_clock::now() - e2e_start).count() +
               0.5)
        << " s\n";
  }
  fs::remove_all(o.out / "work");
  std::cerr << "fuzz: " << findings.count() << " finding(s), " << findings.distinct()
            << " distinct in-process"
            << (findings.count() ? "; reproducers in " + o.out.string() : "") << "\n";
  return findings.count() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace cpufold::fuzz

int main(int argc, char** argv) {
  try {
    return cpufold::fuzz::fuzz_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "cpufold_fuzz: " << e.what() << "\n";
    return 2;
  }
}
