// Precomputed MSAs of a job in a `--msa-dir`, in the layouts AlphaFold2, OpenFold and
// ColabFold write them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io/a3m.h"

namespace cpufold {

struct JobMsaFiles {
  std::vector<std::filesystem::path> files;  // in AF2's order; empty: none found
  std::string layout;                        // where they were found, for the log
  std::vector<std::string> skipped;          // files present but not used, with the reason
};

// The MSA files of `job` under `msa_dir`, the first layout that holds any:
//   DIR/{job}.a3m or DIR/{job}.sto       one file (ColabFold / colabfold_search output)
//   DIR/{job}/msas/                      AlphaFold2's output directory
//   DIR/{job}/                           the msas/ directory itself
//   DIR/alignments/{job}/                OpenFold's precomputed alignments
// A directory contributes uniref90_hits, then the BFD hits (bfd_uniref_hits,
// bfd_uniclust_hits or small_bfd_hits), then mgnify_hits (each .sto or .a3m, .sto preferred),
// as AF2 concatenates them, then every other *.a3m / *.sto in name order. Template hits
// (pdb_hits, hmm_output) and multimer pairing hits (uniprot_hits) are not MSAs of the
// monomer pipeline and are skipped.
JobMsaFiles find_job_msas(const std::filesystem::path& msa_dir, const std::string& job);

// AF2's cap on the rows it reads from a file (uniref90_hits 10000, mgnify_hits 501, the query
// included); 0 when the file has none.
std::int64_t af2_hit_limit(const std::filesystem::path& file);

// Reads one MSA file: Stockholm for .sto, A3M otherwise; truncated to af2_hit_limit.
Msa read_msa_file(const std::filesystem::path& file);

}  // namespace cpufold
