// Which databases of a `--databases DIR` a search method uses: AlphaFold2's data-directory
// layout for jackhmmer / hhblits, ColabFold's MMseqs2 database names for mmseqs2.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cpufold {

enum class SearchMethod { jackhmmer, hhblits, mmseqs2 };

// "jackhmmer", "hhblits" or "mmseqs2"; InputError otherwise.
SearchMethod parse_search_method(const std::string& name);
const char* search_method_name(SearchMethod method);

// The tool of one database search.
enum class SearchTool { jackhmmer, hhblits };

// One search of an AlphaFold2-layout method: one tool over one or more databases, writing one
// file of the job's msas/ directory.
struct MsaSearchStep {
  SearchTool tool = SearchTool::jackhmmer;
  std::string output;                            // "uniref90_hits.sto", ...
  std::vector<std::filesystem::path> databases;  // FASTA files, or hhblits database prefixes
  std::string label;                             // "uniref90", "bfd + uniref30", for progress
};

// ColabFold's MMseqs2 databases (prefixes under DIR).
struct ColabFoldDatabases {
  std::filesystem::path uniref;  // uniref30_*_db
  std::filesystem::path env;     // colabfold_envdb_*_db; empty: not used
  bool indexed = false;          // uniref has a .idx (ColabFold then loads it with mode 2)
};

struct SearchPlan {
  SearchMethod method = SearchMethod::jackhmmer;
  std::vector<MsaSearchStep> steps;  // jackhmmer / hhblits
  ColabFoldDatabases colabfold;      // mmseqs2
  std::vector<std::string> missing;  // databases the method could use that DIR lacks
};

// The searches `method` runs with the databases found under `dir`:
//   jackhmmer  AF2's reduced_dbs preset: jackhmmer on uniref90/*.fasta -> uniref90_hits.sto,
//              mgnify/*.fa -> mgnify_hits.sto, small_bfd/*.fasta -> small_bfd_hits.sto;
//   hhblits    AF2's full_dbs preset: jackhmmer on uniref90 and mgnify as above, and hhblits
//              on bfd/ and uniref30/ (or uniclust30/) together -> bfd_uniref_hits.a3m;
//   mmseqs2    ColabFold's search: DIR/uniref30_*_db, and DIR/colabfold_envdb_*_db when
//              present (the newest name when several).
// Each database found is checked (database_checks.h). InputError when `dir` is not a
// directory or the method finds none of the databases it needs (the message says what it
// looks for).
SearchPlan plan_search(SearchMethod method, const std::filesystem::path& dir);

}  // namespace cpufold
