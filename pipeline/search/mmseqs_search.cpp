#include "pipeline/search/mmseqs_search.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "io/atomic_file.h"
#include "io/whole_file.h"
#include "memory/error.h"
#include "pipeline/search/external_program.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

std::string format_seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  return buffer;
}

class Mmseqs {
 public:
  Mmseqs(fs::path work_dir, int threads, std::function<void(const std::string&)> say)
      : work_dir_(std::move(work_dir)), threads_(threads), say_(std::move(say)) {}

  // mmseqs MODULE ARGS... [--threads N], its output logged to WORK/NN_MODULE.log.
  void run(const std::string& module, Args args, bool threads = true) {
    ExternalProgram p;
    p.package = "mmseqs2";
    p.argv = {"mmseqs", module};
    p.argv.insert(p.argv.end(), args.begin(), args.end());
    if (threads) {
      p.argv.push_back("--threads");
      p.argv.push_back(std::to_string(threads_));
    }
    p.working_dir = work_dir_;
    const std::string log = std::to_string(++step_) + "_" + module;
    p.stdout_file = work_dir_ / (log + ".out");
    p.stderr_file = work_dir_ / (log + ".err");
    const ProgramOutput out = run_program(p);
    if (say_) say_("mmseqs " + module + ": " + format_seconds(out.seconds));
  }

 private:
  fs::path work_dir_;
  int threads_;
  std::function<void(const std::string&)> say_;
  int step_ = 0;
};

}  // namespace

void run_colabfold_search(const std::vector<MmseqsQuery>& queries,
                          const ColabFoldDatabases& databases, const fs::path& work_dir,
                          int threads, const std::function<void(const std::string&)>& say) {
  if (queries.empty()) return;
  fs::create_directories(work_dir);
  std::string fasta;
  for (const MmseqsQuery& q : queries) fasta += ">101\n" + q.sequence + "\n";
  write_file_atomically(work_dir / "query.fas", fasta);

  Mmseqs mmseqs(work_dir, threads, say);
  const std::string load = databases.indexed ? "2" : "0";
  const std::string seq = databases.indexed ? ".idx" : "_seq";
  const std::string aln = databases.indexed ? ".idx" : "_aln";
  const Args search_param = {"--num-iterations",
                             "3",
                             "--db-load-mode",
                             load,
                             "-a",
                             "-e",
                             "0.1",
                             "--max-seqs",
                             "10000",
                             "-s",
                             "8.0"};
  const Args filter_param = {"--filter-msa", "1",     "--filter-min-enable",     "1000",  "--diff",
                             "3000",         "--qid", "0.0,0.2,0.4,0.6,0.8,1.0", "--qsc", "0",
                             "--max-seq-id", "0.95"};
  const auto cat = [](Args a, const Args& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::string uniref = databases.uniref.string();
  mmseqs.run("createdb", {"query.fas", "qdb", "--shuffle", "0"}, false);
  mmseqs.run("search", cat({"qdb", uniref, "res", "tmp"}, search_param));
  mmseqs.run("mvdb", {"tmp/latest/profile_1", "prof_res"}, false);
  mmseqs.run("lndb", {"qdb_h", "prof_res_h"}, false);
  mmseqs.run("expandaln", {"qdb", uniref + seq, "res", uniref + aln, "res_exp", "--db-load-mode",
                           load, "--expansion-mode", "0", "-e", "inf", "--expand-filter-clusters",
                           "1", "--max-seq-id", "0.95"});
  mmseqs.run("align", {"prof_res", uniref + seq, "res_exp", "res_exp_realign", "--db-load-mode",
                       load, "-e", "10", "--max-accept", "100000", "--alt-ali", "10", "-a"});
  mmseqs.run("filterresult", {"qdb", uniref + seq, "res_exp_realign", "res_exp_realign_filter",
                              "--db-load-mode", load, "--qid", "0", "--qsc", "0.8", "--diff", "0",
                              "--max-seq-id", "1.0", "--filter-min-enable", "100"});
  mmseqs.run("result2msa", cat({"qdb", uniref + seq, "res_exp_realign_filter", "uniref.a3m",
                                "--msa-format-mode", "6", "--db-load-mode", load},
                               filter_param));
  std::string final_msa = "uniref.a3m";
  if (!databases.env.empty()) {
    const std::string env = databases.env.string();
    mmseqs.run("search", cat({"prof_res", env, "res_env", "tmp3"}, search_param));
    mmseqs.run("expandaln", {"prof_res", env + seq, "res_env", env + aln, "res_env_exp", "-e",
                             "inf", "--expansion-mode", "0", "--db-load-mode", load});
    mmseqs.run("align", {"tmp3/latest/profile_1", env + seq, "res_env_exp", "res_env_exp_realign",
                         "--db-load-mode", load, "-e", "10", "--max-accept", "100000", "--alt-ali",
                         "10", "-a"});
    mmseqs.run("filterresult",
               {"qdb", env + seq, "res_env_exp_realign", "res_env_exp_realign_filter",
                "--db-load-mode", load, "--qid", "0", "--qsc", "0.8", "--diff", "0", "--max-seq-id",
                "1.0", "--filter-min-enable", "100"});
    mmseqs.run("result2msa", cat({"qdb", env + seq, "res_env_exp_realign_filter", "env.a3m",
                                  "--msa-format-mode", "6", "--db-load-mode", load},
                                 filter_param));
    mmseqs.run("mergedbs", {"qdb", "final.a3m", "uniref.a3m", "env.a3m"}, false);
    final_msa = "final.a3m";
  }
  fs::create_directories(work_dir / "unpacked");
  mmseqs.run("unpackdb",
             {final_msa, "unpacked", "--unpack-name-mode", "0", "--unpack-suffix", ".a3m"});
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const fs::path unpacked = work_dir / "unpacked" / (std::to_string(i) + ".a3m");
    std::error_code ec;
    if (!fs::is_regular_file(unpacked, ec)) {
      throw ExternalProgramError("mmseqs unpackdb wrote no MSA for query " + std::to_string(i) +
                                 " (" + unpacked.string() + ")");
    }
    std::string text = read_whole_file(unpacked).value_or("");
    text.erase(std::remove(text.begin(), text.end(), '\0'), text.end());
    write_file_atomically(queries[i].output, text);
  }
}

}  // namespace cpufold
