// `cpufold search INPUT MSA_DIR --databases DIR`: MSAs from local sequence databases, written
// where `predict --msa-dir MSA_DIR` reads them.
#include <cstdio>
#include <iostream>
#include <memory>

#include "io/text_safety.h"
#include "memory/error.h"
#include "pipeline/batch/predict_jobs.h"
#include "pipeline/cli/cli.h"
#include "pipeline/search/msa_search.h"
#include "pipeline/search/search_databases.h"

namespace cpufold {
namespace {

constexpr const char* kSearchManual = R"(
WHAT IT WRITES (what predict --msa-dir MSA_DIR reads)
  jackhmmer, hhblits  MSA_DIR/JOB/msas/ as AlphaFold2 writes it:
                      uniref90_hits.sto, mgnify_hits.sto, and small_bfd_hits.sto
                      (jackhmmer) or bfd_uniref_hits.a3m (hhblits)
  mmseqs2             MSA_DIR/JOB.a3m as colabfold_search writes it
  A file that exists is kept: a rerun searches only what is missing. Files
  appear whole or not at all.

DATABASES (DIR)
  jackhmmer  AlphaFold2's reduced_dbs: uniref90/uniref90.fasta,
             mgnify/mgy_clusters*.fa,
             small_bfd/bfd-first_non_consensus_sequences.fasta
  hhblits    AlphaFold2's full_dbs: uniref90 and mgnify (jackhmmer) and
             bfd/*_a3m.ffindex + uniref30/*_a3m.ffindex (hhblits)
  mmseqs2    ColabFold's setup_databases.sh: uniref30_*_db and
             colabfold_envdb_*_db (with their _seq and _aln, or .idx)
  What exists is used and what is missing is said once; a method with none of
  its databases is an error before any search.

EXAMPLES
  cpufold search proteins.fasta msas --databases /data/af2 --method jackhmmer
  cpufold search proteins.fasta msas --databases /data/colabfold --method mmseqs2
  cpufold predict proteins.fasta out --msa-dir msas --data ~/af2
)";

struct SearchArgs {
  std::string input, msa_dir, databases, method = "jackhmmer";
  int threads = 0;
};

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  return buffer;
}

void run_search_command(const SearchArgs& a) {
  const SearchMethod method = parse_search_method(a.method);
  const SearchPlan plan = plan_search(method, a.databases);
  const auto say = [](const std::string& line) { std::cout << text::safe_text(line) << std::endl; };
  if (!plan.missing.empty()) {
    std::string missing;
    for (const std::string& m : plan.missing) missing += (missing.empty() ? "" : ", ") + m;
    say("search: not found in " + a.databases + ", searched without: " + missing);
  }
  const JobList jobs = discover_jobs(a.input, QueryOrder::none);
  for (const std::string& w : jobs.warnings) say("warning: " + w);
  std::vector<SearchQuery> queries;
  std::size_t failed = 0;
  for (const PredictJob& job : jobs.jobs) {
    if (!job.error.empty()) {
      say("search: " + job.name + ": not searched: " + job.error);
      ++failed;
      continue;
    }
    queries.push_back({job.name, job.sequence});
  }
  SearchOptions options;
  options.msa_dir = a.msa_dir;
  options.threads = a.threads;
  options.say = say;
  const SearchSummary summary = search_msas(queries, plan, options);
  say("search: " + std::to_string(summary.searched) + " searched, " +
      std::to_string(summary.skipped) + " kept from an earlier run, " + std::to_string(failed) +
      " failed, in " + seconds_text(summary.seconds) + " (" + search_method_name(method) + ")");
  if (failed > 0) {
    throw InputError(std::to_string(failed) + " job(s) of " + a.input +
                     " could not be read (see above); the others were searched");
  }
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Search local sequence databases for each job's MSA (jackhmmer, hhblits or mmseqs2), "
      "written where predict --msa-dir reads it.");
  cmd->footer(std::string(kSearchManual) + kExitStatusHelp);
  cmd->add_option("INPUT", args->input, "FASTA, A3M, CSV/TSV or a directory, as for predict")
      ->required();
  cmd->add_option("MSA_DIR", args->msa_dir, "Where the MSAs are written (created)")->required();
  cmd->add_option("--databases", args->databases,
                  "AlphaFold2's data directory, or the directory of ColabFold's MMseqs2 "
                  "databases")
      ->required();
  cmd->add_option("--method", args->method,
                  "jackhmmer (AF2 reduced_dbs), hhblits (AF2 full_dbs) or mmseqs2 (ColabFold)")
      ->check(CLI::IsMember({"jackhmmer", "hhblits", "mmseqs2"}))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads per search program (default: AF2's 8 for jackhmmer, 4 for hhblits, "
                  "ColabFold's 32 for mmseqs, at most the cores available)")
      ->check(CLI::Range(1, 4096));
  cmd->callback([args] { run_search_command(*args); });
}

}  // namespace cpufold
