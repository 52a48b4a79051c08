#include "pipeline/search/msa_tools.h"

#include <sched.h>

namespace cpufold {

ExternalProgram jackhmmer_program(const std::filesystem::path& query_fasta,
                                  const std::filesystem::path& database,
                                  const std::filesystem::path& output_sto, int cpus) {
  ExternalProgram p;
  p.package = "hmmer";
  p.argv = {"jackhmmer",
            "-o",
            "/dev/null",
            "-A",
            output_sto.string(),
            "--noali",
            "--F1",
            "0.0005",
            "--F2",
            "0.00005",
            "--F3",
            "0.0000005",
            "--incE",
            "0.0001",
            "-E",
            "0.0001",
            "--cpu",
            std::to_string(cpus),
            "-N",
            "1",
            query_fasta.string(),
            database.string()};
  return p;
}

ExternalProgram hhblits_program(const std::filesystem::path& query_fasta,
                                const std::vector<std::filesystem::path>& databases,
                                const std::filesystem::path& output_a3m, int cpus) {
  ExternalProgram p;
  p.package = "hhsuite";
  p.argv = {"hhblits",
            "-i",
            query_fasta.string(),
            "-cpu",
            std::to_string(cpus),
            "-oa3m",
            output_a3m.string(),
            "-o",
            "/dev/null",
            "-n",
            "3",
            "-e",
            "0.001",
            "-maxseq",
            "1000000",
            "-realign_max",
            "100000",
            "-maxfilt",
            "100000",
            "-min_prefilter_hits",
            "1000"};
  for (const std::filesystem::path& db : databases) {
    p.argv.push_back("-d");
    p.argv.push_back(db.string());
  }
  return p;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

}  // namespace cpufold
