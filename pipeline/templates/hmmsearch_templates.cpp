#include "pipeline/templates/hmmsearch_templates.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "io/atomic_file.h"
#include "io/whole_file.h"
#include "memory/error.h"
#include "pipeline/search/external_program.h"
#include "pipeline/templates/msa_for_templates.h"
#include "pipeline/templates/scratch_directory.h"

namespace cpufold {
namespace fs = std::filesystem;

std::string query_stockholm(const std::string& query) {
  return "# STOCKHOLM 1.0\n\nquery " + query + "\n#=GC RF " + std::string(query.size(), 'x') +
         "\n//\n";
}

std::string hmmsearch_pdb_seqres(const std::string& query,
                                 const std::optional<std::string>& msa_sto,
                                 const HmmsearchSettings& settings) {
  if (!fs::is_regular_file(settings.database)) {
    throw InputError("template database " + settings.database.string() +
                     " is missing: AlphaFold2's data directory holds it as "
                     "pdb_seqres/pdb_seqres.txt (scripts/download_pdb_seqres.sh)");
  }
  const ScratchDirectory scratch("hmmsearch");
  const fs::path msa = scratch.path() / "query.sto", hmm = scratch.path() / "query.hmm",
                 out = scratch.path() / "output.sto";
  // AF2 pipeline.py builds the profile from the uniref90 hits, truncated, deduplicated and
  // without empty columns.
  write_file_atomically(msa, msa_sto ? msa_for_templates(*msa_sto) : query_stockholm(query));
  const fs::path& dir = scratch.path();
  run_program({.argv = {"hmmbuild", "--hand", "--amino", hmm.string(), msa.string()},
               .package = "hmmer",
               .working_dir = dir,
               .stdout_file = dir / "hmmbuild.stdout",
               .stderr_file = dir / "hmmbuild.stderr",
               .environment = {}});
  run_program({.argv = {"hmmsearch",  "--noali",
                        "--cpu",      std::to_string(std::max(1, settings.threads)),
                        "--F1",       "0.1",
                        "--F2",       "0.1",
                        "--F3",       "0.1",
                        "--incE",     "100",
                        "-E",         "100",
                        "--domE",     "100",
                        "--incdomE",  "100",
                        "-A",         out.string(),
                        hmm.string(), fs::absolute(settings.database).string()},
               .package = "hmmer",
               .working_dir = dir,
               .stdout_file = dir / "hmmsearch.stdout",
               .stderr_file = dir / "hmmsearch.stderr",
               .environment = {}});
  // hmmsearch writes no alignment without hits.
  return read_whole_file(out).value_or("# STOCKHOLM 1.0\n//\n");
}

std::filesystem::path pdb_seqres_file(const std::filesystem::path& db) {
  const std::filesystem::path nested = db / "pdb_seqres" / "pdb_seqres.txt";
  return std::filesystem::exists(nested) ? nested : db / "pdb_seqres.txt";
}

}  // namespace cpufold
