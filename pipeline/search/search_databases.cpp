#include "pipeline/search/search_databases.h"

#include <algorithm>

#include "memory/error.h"
#include "pipeline/search/database_checks.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The regular files of `dir` whose names end in one of `suffixes`, in name order.
std::vector<fs::path> files_ending(const fs::path& dir, const std::vector<std::string>& suffixes) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    for (const std::string& suffix : suffixes) {
      if (has_suffix(name, suffix) && name[0] != '.') {
        out.push_back(e.path());
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The FASTA database in DIR/SUB: the file named `preferred` when present, else the only (or
// last by name) *.fasta / *.fa file; empty when none.
fs::path fasta_in(const fs::path& dir, const std::string& sub, const std::string& preferred) {
  std::error_code ec;
  if (!preferred.empty() && fs::is_regular_file(dir / sub / preferred, ec)) {
    return dir / sub / preferred;
  }
  const std::vector<fs::path> found = files_ending(dir / sub, {".fasta", ".fa"});
  return found.empty() ? fs::path() : found.back();
}

// The HH-suite database prefix in DIR/SUB or one level below it (AF2: uniref30/UniRef30_2021_03,
// bfd/bfd_metaclust_clu_complete_id30_c90_final_seq.sorted_opt,
// uniclust30/uniclust30_2018_08/uniclust30_2018_08); empty when none.
fs::path ffindex_prefix_in(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  std::vector<fs::path> candidates = files_ending(dir, {"_a3m.ffindex"});
  if (candidates.empty()) {
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_directory(ec)) continue;
      const std::vector<fs::path> inner = files_ending(e.path(), {"_a3m.ffindex"});
      candidates.insert(candidates.end(), inner.begin(), inner.end());
    }
    std::sort(candidates.begin(), candidates.end());
  }
  if (candidates.empty()) return {};
  const std::string index = candidates.back().string();
  return index.substr(0, index.size() - std::string("_a3m.ffindex").size());
}

// The newest (last by name) MMseqs2 database DIR/PREFIX*SUFFIX (with a .dbtype); empty if none.
fs::path mmseqs_db_in(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<fs::path> found;
  for (const fs::path& p : files_ending(dir, {suffix + ".dbtype"})) {
    const std::string name = p.filename().string();
    if (name.rfind(prefix, 0) == 0) {
      found.push_back(dir / name.substr(0, name.size() - std::string(".dbtype").size()));
    }
  }
  return found.empty() ? fs::path() : found.back();
}

void add_jackhmmer_step(SearchPlan& plan, const fs::path& fasta, const std::string& label,
                        const std::string& output, const std::string& looked_for) {
  if (fasta.empty()) {
    plan.missing.push_back(label + " (" + looked_for + ")");
    return;
  }
  check_fasta_database(fasta);
  plan.steps.push_back({SearchTool::jackhmmer, output, {fasta}, label});
}

}  // namespace

SearchMethod parse_search_method(const std::string& name) {
  if (name == "jackhmmer") return SearchMethod::jackhmmer;
  if (name == "hhblits") return SearchMethod::hhblits;
  if (name == "mmseqs2") return SearchMethod::mmseqs2;
  throw InputError("--method: '" + name + "' is not one of jackhmmer, hhblits, mmseqs2");
}

const char* search_method_name(SearchMethod method) {
  switch (method) {
    case SearchMethod::jackhmmer:
      return "jackhmmer";
    case SearchMethod::hhblits:
      return "hhblits";
    case SearchMethod::mmseqs2:
      return "mmseqs2";
  }
  return "?";
}

SearchPlan plan_search(SearchMethod method, const fs::path& given_dir) {
  // Absolute: the programs run in a scratch directory.
  const fs::path dir = fs::absolute(given_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(dir.string() + ": --databases is not a directory");
  }
  SearchPlan plan;
  plan.method = method;
  if (method == SearchMethod::mmseqs2) {
    plan.colabfold.uniref = mmseqs_db_in(dir, "uniref30_", "_db");
    if (plan.colabfold.uniref.empty()) {
      throw InputError(dir.string() +
                       ": no ColabFold UniRef30 database for --method mmseqs2 (looked for "
                       "uniref30_*_db.dbtype, e.g. uniref30_2302_db from ColabFold's "
                       "setup_databases.sh)");
    }
    plan.colabfold.env = mmseqs_db_in(dir, "colabfold_envdb_", "_db");
    if (plan.colabfold.env.empty()) {
      plan.missing.push_back(
          "the environmental database (colabfold_envdb_*_db): the MSA holds UniRef30 hits only");
    }
    plan.colabfold.indexed = fs::exists(plan.colabfold.uniref.string() + ".idx", ec) ||
                             fs::exists(plan.colabfold.uniref.string() + ".idx.index", ec);
    for (const fs::path& db : {plan.colabfold.uniref, plan.colabfold.env}) {
      if (db.empty()) continue;
      check_mmseqs_database(db);
      // ColabFold expands hits through DB_seq and DB_aln (or the .idx that holds both).
      if (!plan.colabfold.indexed) {
        check_mmseqs_database(db.string() + "_seq");
        check_mmseqs_database(db.string() + "_aln");
      }
    }
    return plan;
  }
  add_jackhmmer_step(plan, fasta_in(dir, "uniref90", "uniref90.fasta"), "uniref90",
                     "uniref90_hits.sto", "uniref90/uniref90.fasta");
  if (method == SearchMethod::jackhmmer) {
    add_jackhmmer_step(plan, fasta_in(dir, "small_bfd", "bfd-first_non_consensus_sequences.fasta"),
                       "small_bfd", "small_bfd_hits.sto",
                       "small_bfd/bfd-first_non_consensus_sequences.fasta");
  } else {
    MsaSearchStep hhblits{SearchTool::hhblits, "bfd_uniref_hits.a3m", {}, ""};
    const fs::path bfd = ffindex_prefix_in(dir / "bfd");
    fs::path uniref30 = ffindex_prefix_in(dir / "uniref30");
    if (uniref30.empty()) uniref30 = ffindex_prefix_in(dir / "uniclust30");
    for (const auto& [prefix, label] : {std::pair{bfd, "bfd"}, std::pair{uniref30, "uniref30"}}) {
      if (prefix.empty()) {
        plan.missing.push_back(std::string(label) + " (" + label + "/*_a3m.ffindex)");
        continue;
      }
      check_ffindex_database(prefix, /*need_hhm=*/false);  // hhblits makes HMMs from the A3Ms
      hhblits.databases.push_back(prefix);
      hhblits.label += (hhblits.label.empty() ? "" : " + ") + std::string(label);
    }
    if (hhblits.databases.empty()) {
      throw InputError(dir.string() +
                       ": no HH-suite database for --method hhblits (looked for "
                       "bfd/*_a3m.ffindex and uniref30/*_a3m.ffindex as in AlphaFold2's data "
                       "directory)");
    }
    plan.steps.push_back(hhblits);
  }
  add_jackhmmer_step(plan, fasta_in(dir, "mgnify", ""), "mgnify", "mgnify_hits.sto",
                     "mgnify/mgy_clusters*.fa");
  if (plan.steps.empty()) {
    throw InputError(dir.string() +
                     ": no FASTA database for --method jackhmmer (looked for "
                     "uniref90/uniref90.fasta, mgnify/mgy_clusters*.fa and "
                     "small_bfd/bfd-first_non_consensus_sequences.fasta as in AlphaFold2's data "
                     "directory)");
  }
  return plan;
}

}  // namespace cpufold
