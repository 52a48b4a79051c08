// `cpufold search`: MSAs for a batch of queries, written where `predict --msa-dir` reads them
// (pipeline/batch/msa_directory.h): DIR/JOB/msas/*.sto|*.a3m for jackhmmer and hhblits
// (AlphaFold2's layout), DIR/JOB.a3m for mmseqs2 (ColabFold's).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "pipeline/search/search_databases.h"

namespace cpufold {

struct SearchQuery {
  std::string name;      // the job name: file-safe
  std::string sequence;  // uppercase one-letter codes
};

struct SearchOptions {
  std::filesystem::path msa_dir;
  int threads = 0;  // 0: each tool's AF2 / ColabFold count, at most the cores available
  std::function<void(const std::string&)> say;  // progress lines
  // How progress lines number the queries, "search I/N": I from `first + 1`, N `of` (0: the
  // count of queries), for a caller that searches a batch a few queries at a time.
  std::size_t first = 0, of = 0;
};

struct SearchedFile {
  std::filesystem::path path;
  std::size_t depth = 0;  // rows, the query included
  double seconds = 0;     // 0 when it was there already
  bool skipped = false;   // found from an earlier run
};

struct SearchSummary {
  std::size_t searched = 0;  // queries searched by this run (at least one file written)
  std::size_t skipped = 0;   // queries whose every file was there already
  double seconds = 0;
  std::vector<std::vector<SearchedFile>> files;  // per query, in `queries` order
};

// The files `plan` writes for job `name` under `msa_dir`.
std::vector<std::filesystem::path> search_outputs(const SearchPlan& plan,
                                                  const std::filesystem::path& msa_dir,
                                                  const std::string& name);

// Removes the scratch directories under `msa_dir` of searches whose process is gone (killed).
void remove_stale_search_scratch(const std::filesystem::path& msa_dir);

// Searches each query's MSAs with `plan` and writes them under `options.msa_dir`. A file that
// exists is kept (a rerun searches only what is missing). Every file appears whole or not at
// all: a tool writes to a hidden temporary name that is renamed when it succeeded. Scratch
// files go to MSA_DIR/.cpufold-search.tmp.PID/, removed at the end; those of killed runs are
// removed at the start. Each written file is read back (Stockholm / A3M) to count its rows: a
// file that does not parse is the tool's failure (ExternalProgramError), and is not kept. The
// errors of run_program and the database checks propagate; files finished before stay.
SearchSummary search_msas(const std::vector<SearchQuery>& queries, const SearchPlan& plan,
                          const SearchOptions& options);

}  // namespace cpufold
