// The output files of one `cpufold predict` job, with ColabFold's names:
// {job}_unrelaxed_rank_00K_{tag}.pdb/.cif, {job}_scores_rank_00K_{tag}.json,
// {job}_predicted_aligned_error_v1.json, {job}_plddt.png, {job}_pae.png and {job}.done.txt.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "pipeline/output/msa_report.h"
#include "pipeline/output/prediction_view.h"

namespace cpufold {

// One prediction rendered to the contents of its files as soon as it ran, so the
// prediction (whose arena holds the representations) is freed before the next run.
struct RenderedPrediction {
  int model_number = 0;
  std::uint64_t seed = 0;
  std::string tag;  // {model_type}_model_N_seed_SSS
  double mean_plddt = 0;
  bool has_pae = false;
  double ptm = 0;
  float max_pae = 0;
  std::string pdb, cif, scores, pae_v1;   // pae_v1 empty without a PAE head
  std::vector<float> plddt, pae;          // [n_res], [n_res * n_res] (for the plots)
  double score = 0;                       // the ranking metric, set by the caller
  std::vector<std::string> recycle_pdbs;  // --save-recycles: the structure after each iteration
  // Written while the model ran, under unranked_path(), renamed by rank: "all" (.h5,
  // --save-all), "single_repr" and "pair_repr" (.npy, --save-*-representations).
  struct Unranked {
    std::string kind, ext;
  };
  std::vector<Unranked> unranked;
};

// The job's other files, and ColabFold's output switches.
struct JobExtras {
  std::string a3m;           // {job}.a3m; empty: not written
  std::string coverage_png;  // {job}_coverage.png; empty: not written
  bool plots = true;         // {job}_plddt.png and {job}_pae.png
  bool pae_json = true;      // {job}_predicted_aligned_error_v1.json
  // Every file of the job (with copies of the batch's cite.bibtex and config.json) into
  // {job}.result.zip, the originals deleted; the zip instead of {job}.done.txt marks it done.
  bool zip = false;
};

// {job}_{kind}_{tag}{ext}; once ranked {job}_{kind}_rank_00K_{tag}{ext}.
std::filesystem::path unranked_path(const std::filesystem::path& dir, const std::string& job,
                                    const std::string& kind, const std::string& tag,
                                    const std::string& ext);
std::filesystem::path result_zip(const std::filesystem::path& dir, const std::string& job);

// "000" (ColabFold's seed_{seed:03d}) and "rank_001" (rank_{n:03d}, 1-based).
std::string seed_tag(std::uint64_t seed);
std::string rank_tag(std::size_t rank);
// "alphafold2_ptm_model_3_seed_000".
std::string prediction_tag(const std::string& model_type, int model_number, std::uint64_t seed);

// The most bytes cpufold ever appends to a job name to name a file in the output directory:
// the longest output file suffix (any rank, model type, model and seed the options allow)
// plus the temporary-name decoration of write_file_atomically. A job name of at most
// NAME_MAX minus this many bytes gives file names every file system accepts.
std::size_t longest_job_file_suffix();

// `msa`: the job's MSA source and depth for the scores JSON (none: not stated).
RenderedPrediction render_prediction(const PredictionView& p, const std::string& job,
                                     const std::string& model_type, int model_number,
                                     std::uint64_t seed, const MsaReport* msa = nullptr);

// Only the PDB text of `p` (--save-recycles: one per recycle).
std::string render_pdb(const PredictionView& p, const std::string& job, const std::string& tag);

// Writes every file of `job` into `dir`, `ranked` best first, each atomically, and
// {job}.done.txt last (listing them), so a job is done only once all of it is on disk.
// Returns the file names written, the marker (or the zip) last.
std::vector<std::string> write_job_outputs(const std::filesystem::path& dir, const std::string& job,
                                           const std::vector<RenderedPrediction>& ranked,
                                           const JobExtras& extras = {});

std::filesystem::path done_marker(const std::filesystem::path& dir, const std::string& job);

// Removes the output files of `job` (every rank, the done marker included), so a job that is
// redone leaves nothing of an earlier, interrupted or differently configured run.
// `keep_tags`: model runs whose unranked files (--save-all, --save-*-representations) stay,
// because their finished results are reused (pipeline/batch/finished_runs.h).
void remove_job_outputs(const std::filesystem::path& dir, const std::string& job,
                        const std::set<std::string>& keep_tags = {});

}  // namespace cpufold
