#include "pipeline/job_outputs.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <set>

#include "io/atomic_file.h"
#include "pipeline/params_directory.h"
#include "pipeline/plots.h"
#include "pipeline/scores_json.h"
#include "pipeline/structure_files.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// The parts of the output file names after the job name.
constexpr const char* kUnrelaxed = "_unrelaxed_";
constexpr const char* kScores = "_scores_";
constexpr const char* kPaeJson = "_predicted_aligned_error_v1.json";
constexpr const char* kPlddtPng = "_plddt.png";
constexpr const char* kPaePng = "_pae.png";
constexpr const char* kDoneTxt = ".done.txt";

std::vector<float> copy_floats(const Tensor& t) {
  std::vector<float> v(static_cast<std::size_t>(t.numel()));
  if (t.rank() == 1) {
    for (std::int64_t i = 0; i < t.dim(0); ++i) v[i] = t.at<float>({i});
  } else {
    const std::int64_t n = t.dim(1);
    for (std::int64_t i = 0; i < t.dim(0); ++i) {
      for (std::int64_t j = 0; j < n; ++j) v[i * n + j] = t.at<float>({i, j});
    }
  }
  return v;
}

}  // namespace

std::string seed_tag(std::uint64_t seed) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%03llu", static_cast<unsigned long long>(seed));
  return buf;
}

std::string rank_tag(std::size_t rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank_%03zu", rank);
  return buf;
}

std::string prediction_tag(const std::string& model_type, int model_number, std::uint64_t seed) {
  return model_type + "_model_" + std::to_string(model_number) + "_seed_" + seed_tag(seed);
}

std::size_t longest_job_file_suffix() {
  // The widest rank and seed numbers the option types allow, the longest model type name.
  std::string longest_type;
  for (ModelType type : {ModelType::alphafold2_ptm, ModelType::alphafold2}) {
    if (model_type_name(type).size() > longest_type.size()) longest_type = model_type_name(type);
  }
  const std::string tag =
      rank_tag(std::numeric_limits<std::size_t>::max()) + "_" +
      prediction_tag(longest_type, 5, std::numeric_limits<std::uint64_t>::max());
  std::size_t longest = 0;
  for (const std::string& suffix :
       {kUnrelaxed + tag + ".pdb", kUnrelaxed + tag + ".cif", kScores + tag + ".json",
        std::string(kPaeJson), std::string(kPlddtPng), std::string(kPaePng),
        std::string(kDoneTxt)}) {
    longest = std::max(longest, suffix.size());
  }
  return longest + temporary_name_overhead();
}

RenderedPrediction render_prediction(const Prediction& p, const RawFeatures& raw,
                                     const std::string& job, const std::string& model_type,
                                     int model_number, std::uint64_t seed) {
  RenderedPrediction r;
  r.model_number = model_number;
  r.seed = seed;
  r.tag = prediction_tag(model_type, model_number, seed);
  r.plddt = copy_floats(p.plddt);
  for (float v : r.plddt) r.mean_plddt += v;
  r.mean_plddt /= static_cast<double>(std::max<std::size_t>(r.plddt.size(), 1));
  r.has_pae = p.has_pae;
  if (p.has_pae) {
    r.ptm = p.ptm_score;
    r.max_pae = p.max_predicted_aligned_error;
    r.pae = copy_floats(p.predicted_aligned_error);
    r.pae_v1 = pae_v1_json(p);
  }
  StructureOutput s;
  s.name = job;
  s.model_name = r.tag;
  s.aatype = raw.aatype;
  s.residue_index = raw.residue_index;
  s.atom_positions = p.final_atom_positions;
  s.atom_mask = p.final_atom_mask;
  s.plddt = p.plddt;
  r.pdb = to_pdb(s);
  r.cif = to_mmcif(s);
  r.scores = scores_json(p);
  return r;
}

fs::path done_marker(const fs::path& dir, const std::string& job) {
  return dir / (job + kDoneTxt);
}

std::vector<std::string> write_job_outputs(const fs::path& dir, const std::string& job,
                                           const std::vector<RenderedPrediction>& ranked) {
  std::vector<std::string> written;
  auto write = [&](const std::string& name, const std::string& bytes) {
    write_file_atomically(dir / name, bytes);
    written.push_back(name);
  };
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    const RenderedPrediction& r = ranked[k];
    const std::string tag = rank_tag(k + 1) + "_" + r.tag;
    write(job + kUnrelaxed + tag + ".pdb", r.pdb);
    write(job + kUnrelaxed + tag + ".cif", r.cif);
    write(job + kScores + tag + ".json", r.scores);
  }
  if (ranked.front().has_pae) {
    write(job + kPaeJson, ranked.front().pae_v1);
  }
  // Plots of the top 5, as ColabFold draws them.
  std::vector<PlddtCurve> curves;
  std::vector<PaeMatrix> matrices;
  for (std::size_t k = 0; k < std::min<std::size_t>(ranked.size(), 5); ++k) {
    const RenderedPrediction& r = ranked[k];
    const std::string label =
        rank_tag(k + 1) + " model_" + std::to_string(r.model_number) + " seed_" + seed_tag(r.seed);
    curves.push_back({label, r.plddt});
    if (r.has_pae) {
      const auto n = static_cast<std::int64_t>(r.plddt.size());
      // Tensor views are mutable by type; the plot only reads.
      auto* data = const_cast<float*>(r.pae.data());
      matrices.push_back({label, Tensor(data, DType::f32, Shape{n, n}), r.max_pae});
    }
  }
  const std::string title = job + " (" + std::to_string(ranked.front().plddt.size()) + " aa)";
  write(job + kPlddtPng, plddt_plot_png(title, curves));
  if (!matrices.empty()) write(job + kPaePng, pae_plot_png(title, matrices));

  std::string marker =
      "cpufold predict " + std::string(CPUFOLD_VERSION) + ": " + job + " done; files:\n";
  for (const std::string& name : written) marker += name + "\n";
  write_file_atomically(done_marker(dir, job), marker);
  written.push_back(done_marker(dir, job).filename().string());
  return written;
}

void remove_job_outputs(const fs::path& dir, const std::string& job) {
  const std::string ranked[] = {job + kUnrelaxed + "rank_", job + kScores + "rank_"};
  const std::set<std::string> single = {job + kPaeJson, job + kPlddtPng, job + kPaePng};
  std::error_code ec;
  // The marker first: killed half-way, the job is not done, whatever remains.
  fs::remove(done_marker(dir, job), ec);
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    bool match = single.count(name) > 0;
    for (const std::string& prefix : ranked) {
      if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
          std::isdigit(static_cast<unsigned char>(name[prefix.size()]))) {
        match = true;
      }
    }
    if (match) fs::remove(entry.path(), ec);
  }
}

}  // namespace cpufold
