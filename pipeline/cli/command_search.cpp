// `cpufold search INPUT MSA_DIR --databases DIR`: MSAs from local sequence databases, written
// where `predict --msa-dir MSA_DIR` reads them.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "io/atomic_file.h"
#include "io/text_safety.h"
#include "io/whole_file.h"
#include "memory/error.h"
#include "pipeline/batch/predict_jobs.h"
#include "pipeline/cli/cli.h"
#include "pipeline/search/msa_search.h"
#include "pipeline/search/search_databases.h"
#include "pipeline/templates/hmmsearch_templates.h"

namespace cpufold {
namespace {

constexpr const char* kSearchManual = R"(
WHAT IT WRITES (what predict --msa-dir MSA_DIR reads)
  jackhmmer, hhblits  MSA_DIR/JOB/msas/ as AlphaFold2 writes it:
                      uniref90_hits.sto, mgnify_hits.sto, and small_bfd_hits.sto
                      (jackhmmer) or bfd_uniref_hits.a3m (hhblits)
  mmseqs2             MSA_DIR/JOB.a3m as colabfold_search writes it
  --templates         MSA_DIR/JOB/msas/pdb_hits.sto (hmmsearch of DIR's
                      pdb_seqres.txt), read by predict --msa-dir --templates
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
  bool templates = false;
};

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  return buffer;
}

namespace fs = std::filesystem;

// --templates: AF2's template search needs the seqres file, and its hits go beside the
// AF2-layout MSAs. InputError before any search otherwise.
fs::path template_database(const SearchArgs& a, SearchMethod method) {
  if (method == SearchMethod::mmseqs2) {
    throw InputError(
        "--templates: cpufold searches templates with hmmsearch into AlphaFold2's layout "
        "(JOB/msas/pdb_hits.sto), which --method mmseqs2 does not write: use jackhmmer or "
        "hhblits, or let predict --templates --template-db DIR search them");
  }
  const fs::path seqres = pdb_seqres_file(a.databases);
  if (!fs::is_regular_file(seqres)) {
    throw InputError("--templates: " + a.databases +
                     " has no pdb_seqres/pdb_seqres.txt or pdb_seqres.txt (AlphaFold2's data "
                     "directory layout)");
  }
  return seqres;
}

// AF2's template search for each job: hmmsearch of `seqres` with the job's uniref90 hits as
// the profile (the query alone without them), kept as MSA_DIR/JOB/msas/pdb_hits.sto, where
// predict --msa-dir --templates reads it. A file that exists is kept.
void search_templates(const std::vector<SearchQuery>& queries, const SearchArgs& a,
                      const fs::path& seqres, const std::function<void(const std::string&)>& say) {
  for (const SearchQuery& q : queries) {
    const fs::path dir = fs::path(a.msa_dir) / q.name / "msas";
    const fs::path out = dir / "pdb_hits.sto";
    if (fs::is_regular_file(out)) {
      say("search: " + q.name + ": pdb_hits.sto kept from an earlier run");
      continue;
    }
    const std::optional<std::string> msa = read_whole_file(dir / "uniref90_hits.sto");
    const auto start = std::chrono::steady_clock::now();
    HmmsearchSettings settings;
    settings.database = seqres;
    settings.threads = a.threads > 0 ? a.threads : 1;
    const std::string hits = hmmsearch_pdb_seqres(q.sequence, msa, settings);
    fs::create_directories(dir);
    write_file_atomically(out, hits);
    say("search: " + q.name + ": pdb_hits.sto (hmmsearch, profile of " +
        (msa ? "uniref90_hits.sto" : "the query alone") + ") in " +
        seconds_text(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  }
}

void run_search_command(const SearchArgs& a) {
  const SearchMethod method = parse_search_method(a.method);
  const fs::path seqres = a.templates ? template_database(a, method) : fs::path();
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
  if (a.templates) search_templates(queries, a, seqres, say);
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
  cmd->add_flag("--templates", args->templates,
                "also AF2's template search: hmmsearch of DIR's pdb_seqres.txt with each job's "
                "uniref90 hits as the profile, kept as MSA_DIR/JOB/msas/pdb_hits.sto "
                "(jackhmmer and hhblits)");
  cmd->add_option("--threads", args->threads,
                  "Threads per search program (default: AF2's 8 for jackhmmer, 4 for hhblits, "
                  "ColabFold's 32 for mmseqs, at most the cores available)")
      ->check(CLI::Range(1, 4096));
  cmd->callback([args] { run_search_command(*args); });
}

}  // namespace cpufold
