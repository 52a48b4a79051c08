// Shared by the `cpufold predict` end-to-end tests: the tiny test weights, fast options and
// a look at an output directory.
#pragma once

#include <spawn.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

extern char** environ;

namespace cpufold::testing {

// Starts the built `cpufold` with `args` directly (no shell, so a signal sent to the PID hits
// cpufold itself); -1 when it cannot be started.
inline pid_t spawn_cpufold(const std::vector<std::string>& args) {
  std::vector<std::string> owned{CPUFOLD_BINARY};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawn(&pid, CPUFOLD_BINARY, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// Fast settings on the shipped tiny weights (models 1 and 3 exist); jobs without an MSA fold
// from the query alone (--msa-mode single_sequence).
inline std::string fast_predict_options(const std::string& models = "1") {
  const int count = static_cast<int>(models.size() + 1) / 2;
  return "--data '" + test_data_dir().string() + "' --model-order " + models + " --num-models " +
         std::to_string(count) + " --num-recycle 1 --threads 1 --msa-mode single_sequence";
}

inline std::filesystem::path examples_dir() {
  return test_data_dir().parent_path().parent_path() / "data" / "examples";
}

// File names in `dir` (not recursive).
inline std::set<std::string> file_names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

// The rank tags of a job's predictions ("rank_001_alphafold2_ptm_model_3_seed_000", ...), in
// rank order, read from its scores file names.
inline std::vector<std::string> ranked_tags(const std::filesystem::path& dir,
                                            const std::string& job) {
  std::vector<std::string> tags;
  const std::string prefix = job + "_scores_";
  for (const std::string& name : file_names(dir)) {
    if (name.rfind(prefix + "rank_", 0) == 0 && name.size() > prefix.size() + 5 &&
        name.substr(name.size() - 5) == ".json") {
      tags.push_back(name.substr(prefix.size(), name.size() - prefix.size() - 5));
    }
  }
  return tags;  // the set is sorted, so rank_001 comes first
}

// Every file ColabFold writes for a job whose predictions carry `tags`.
inline std::set<std::string> job_files(const std::string& job,
                                       const std::vector<std::string>& tags) {
  std::set<std::string> names = {job + "_predicted_aligned_error_v1.json",
                                 job + "_plddt.png",
                                 job + "_pae.png",
                                 job + "_coverage.png",
                                 job + ".a3m",
                                 job + ".done.txt"};
  for (const std::string& tag : tags) {
    names.insert(job + "_unrelaxed_" + tag + ".pdb");
    names.insert(job + "_unrelaxed_" + tag + ".cif");
    names.insert(job + "_scores_" + tag + ".json");
  }
  return names;
}

// Debian's python3 with python3-gemmi (scripts/setup.sh installs it).
inline constexpr const char* kSystemPython = "/usr/bin/python3";

// Reads PDB / mmCIF files with gemmi and prints, per file, a JSON object: the residue count
// and sequence of the first chain, every atom's B-factor per residue, and the row count of
// the ModelCIF local pLDDT table (mmCIF only).
inline constexpr const char* kGemmiReport = R"(
import gemmi, json, sys
out = []
for path in sys.argv[1:]:
    st = gemmi.read_structure(path)
    chain = st[0][0]
    item = {"models": len(st), "chains": len(st[0]), "n": len(chain),
            "seq": gemmi.one_letter_code([r.name for r in chain]),
            "b": [[a.b_iso for a in r] for r in chain]}
    if path.endswith(".cif"):
        block = gemmi.cif.read(path).sole_block()
        item["qa_local"] = len(block.find_mmcif_category("_ma_qa_metric_local."))
    out.append(item)
print(json.dumps(out))
)";

}  // namespace cpufold::testing
