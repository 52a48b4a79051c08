// What the fuzz driver feeds each input to, in-process: the FASTA, A3M, Stockholm and
// CSV/TSV parsers and `cpufold predict`'s job discovery. Each must return a result that
// keeps its invariants, or throw InputError with a located message; anything else (another
// exception, a broken invariant) is a finding.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cpufold::fuzz {

struct Finding {
  std::string target;  // "fasta", "a3m", "stockholm", "csv", "tsv", "discover_jobs"
  std::string what;
};

// Every parser on `bytes` (named "fuzz.EXT" in messages).
std::vector<Finding> run_parsers(std::string_view bytes);

// discover_jobs on `input` (a file or directory the caller wrote).
std::vector<Finding> run_discovery(const std::filesystem::path& input);

}  // namespace cpufold::fuzz
