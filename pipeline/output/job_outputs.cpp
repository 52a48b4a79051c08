#include "pipeline/output/job_outputs.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <set>

#include "io/atomic_file.h"
#include "io/zip_writer.h"
#include "pipeline/output/plots.h"
#include "pipeline/output/scores_json.h"
#include "pipeline/output/structure_files.h"
#include "pipeline/runner/params_directory.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// The parts of the output file names after the job name.
constexpr const char* kUnrelaxed = "_unrelaxed_";
constexpr const char* kScores = "_scores_";
constexpr const char* kPaeJson = "_predicted_aligned_error_v1.json";
constexpr const char* kPlddtPng = "_plddt.png";
constexpr const char* kPaePng = "_pae.png";
constexpr const char* kCoveragePng = "_coverage.png";
constexpr const char* kA3m = ".a3m";
constexpr const char* kResultZip = ".result.zip";
constexpr const char* kDoneTxt = ".done.txt";
// Per-prediction files of --save-all and --save-*-representations: JOB_KIND_[rank_K_]TAG.EXT.
constexpr std::pair<const char*, const char*> kUnrankedKinds[] = {
    {"all", ".h5"}, {"single_repr", ".npy"}, {"pair_repr", ".npy"}};

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

StructureOutput structure_of(const PredictionView& p, const std::string& job,
                             const std::string& tag) {
  StructureOutput s;
  s.name = job;
  s.model_name = tag;
  s.aatype = p.aatype;
  s.residue_index = p.residue_index;
  s.atom_positions = p.atom_positions;
  s.atom_mask = p.atom_mask;
  s.plddt = p.plddt;
  return s;
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
  // The widest rank, seed and recycle numbers the option types allow, the longest model type.
  std::string longest_type;
  for (ModelType type : {ModelType::alphafold2_ptm, ModelType::alphafold2}) {
    if (model_type_name(type).size() > longest_type.size()) longest_type = model_type_name(type);
  }
  const std::string tag =
      rank_tag(std::numeric_limits<std::size_t>::max()) + "_" +
      prediction_tag(longest_type, 5, std::numeric_limits<std::uint64_t>::max());
  std::vector<std::string> suffixes = {
      kUnrelaxed + tag + ".pdb",
      kUnrelaxed + tag + ".cif",
      kUnrelaxed + tag + ".r" + std::to_string(std::numeric_limits<int>::max()) + ".pdb",
      kScores + tag + ".json",
      kPaeJson,
      kPlddtPng,
      kPaePng,
      kCoveragePng,
      kA3m,
      kResultZip,
      kDoneTxt};
  for (const auto& [kind, ext] : kUnrankedKinds) {
    suffixes.push_back(std::string("_").append(kind).append("_").append(tag).append(ext));
  }
  std::size_t longest = 0;
  for (const std::string& suffix : suffixes) longest = std::max(longest, suffix.size());
  return longest + temporary_name_overhead();
}

RenderedPrediction render_prediction(const PredictionView& p, const std::string& job,
                                     const std::string& model_type, int model_number,
                                     std::uint64_t seed, const MsaReport* msa) {
  RenderedPrediction r;
  r.model_number = model_number;
  r.seed = seed;
  r.tag = prediction_tag(model_type, model_number, seed);
  r.plddt = copy_floats(p.plddt);
  for (float v : r.plddt) r.mean_plddt += v;
  r.mean_plddt /= static_cast<double>(std::max<std::size_t>(r.plddt.size(), 1));
  r.has_pae = p.has_pae;
  if (p.has_pae) {
    r.ptm = p.ptm;
    r.max_pae = p.max_pae;
    r.pae = copy_floats(p.pae);
    r.pae_v1 = pae_v1_json(p);
  }
  const StructureOutput s = structure_of(p, job, r.tag);
  r.pdb = to_pdb(s);
  r.cif = to_mmcif(s);
  r.scores = scores_json(p, msa);
  return r;
}

std::string render_pdb(const PredictionView& p, const std::string& job, const std::string& tag) {
  return to_pdb(structure_of(p, job, tag));
}

fs::path unranked_path(const fs::path& dir, const std::string& job, const std::string& kind,
                       const std::string& tag, const std::string& ext) {
  return dir / (job + "_" + kind + "_" + tag + ext);
}

fs::path result_zip(const fs::path& dir, const std::string& job) {
  return dir / (job + kResultZip);
}

fs::path done_marker(const fs::path& dir, const std::string& job) {
  return dir / (job + kDoneTxt);
}

namespace {

// Writes each file atomically into `dir` and keeps its name.
class JobFileWriter {
 public:
  explicit JobFileWriter(const fs::path& dir) : dir_(dir) {}
  void write(const std::string& name, const std::string& bytes) {
    write_file_atomically(dir_ / name, bytes);
    written_.push_back(name);
  }
  void rename(const fs::path& from, const std::string& name) {
    fs::rename(from, dir_ / name);
    written_.push_back(name);
  }
  std::vector<std::string>& written() { return written_; }

 private:
  fs::path dir_;
  std::vector<std::string> written_;
};

// A prediction's files under its rank: structures, scores, recycles, and the unranked files
// renamed.
void write_ranked(JobFileWriter& out, const fs::path& dir, const std::string& job, std::size_t rank,
                  const RenderedPrediction& r) {
  const std::string tag = rank_tag(rank) + "_" + r.tag;
  out.write(job + kUnrelaxed + tag + ".pdb", r.pdb);
  out.write(job + kUnrelaxed + tag + ".cif", r.cif);
  out.write(job + kScores + tag + ".json", r.scores);
  for (std::size_t i = 0; i < r.recycle_pdbs.size(); ++i) {
    out.write(job + kUnrelaxed + tag + ".r" + std::to_string(i) + ".pdb", r.recycle_pdbs[i]);
  }
  for (const RenderedPrediction::Unranked& u : r.unranked) {
    out.rename(unranked_path(dir, job, u.kind, r.tag, u.ext),
               job + "_" + u.kind + "_" + tag + u.ext);
  }
}

// Plots of the top 5, as ColabFold draws them.
void write_plots(JobFileWriter& out, const std::string& job,
                 const std::vector<RenderedPrediction>& ranked) {
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
  out.write(job + kPlddtPng, plddt_plot_png(title, curves));
  if (!matrices.empty()) out.write(job + kPaePng, pae_plot_png(title, matrices));
}

// The job's files (with the batch's cite.bibtex and config.json) into its result.zip; the
// originals deleted.
std::vector<std::string> zip_job(const fs::path& dir, const std::string& job,
                                 const std::vector<std::string>& written) {
  std::vector<fs::path> files;
  for (const std::string& name : written) files.push_back(dir / name);
  for (const char* batch_file : {"cite.bibtex", "config.json"}) {
    if (fs::exists(dir / batch_file)) files.push_back(dir / batch_file);
  }
  write_zip_atomically(result_zip(dir, job), files);
  for (const std::string& name : written) fs::remove(dir / name);
  return {result_zip(dir, job).filename().string()};
}

}  // namespace

std::vector<std::string> write_job_outputs(const fs::path& dir, const std::string& job,
                                           const std::vector<RenderedPrediction>& ranked,
                                           const JobExtras& extras) {
  JobFileWriter out(dir);
  if (!extras.a3m.empty()) out.write(job + kA3m, extras.a3m);
  if (!extras.coverage_png.empty()) out.write(job + kCoveragePng, extras.coverage_png);
  for (std::size_t k = 0; k < ranked.size(); ++k) write_ranked(out, dir, job, k + 1, ranked[k]);
  if (ranked.front().has_pae && extras.pae_json) {
    out.write(job + kPaeJson, ranked.front().pae_v1);
  }
  if (extras.plots) write_plots(out, job, ranked);
  if (extras.zip) return zip_job(dir, job, out.written());

  std::vector<std::string>& written = out.written();
  std::string marker =
      "cpufold predict " + std::string(CPUFOLD_VERSION) + ": " + job + " done; files:\n";
  for (const std::string& name : written) marker += name + "\n";
  write_file_atomically(done_marker(dir, job), marker);
  written.push_back(done_marker(dir, job).filename().string());
  return written;
}

void remove_job_outputs(const fs::path& dir, const std::string& job,
                        const std::set<std::string>& keep_tags) {
  std::vector<std::string> ranked = {job + kUnrelaxed + "rank_", job + kScores + "rank_"};
  // Left unranked by a run killed before its job was written.
  std::vector<std::pair<std::string, std::string>> unranked;
  for (const auto& [kind, ext] : kUnrankedKinds) {
    ranked.push_back(job + "_" + kind + "_rank_");
    unranked.emplace_back(job + "_" + kind + "_", ext);
  }
  const std::set<std::string> single = {job + kPaeJson, job + kPlddtPng, job + kPaePng,
                                        job + kCoveragePng, job + kResultZip};
  // {job}.a3m is never removed: it may be this job's own input MSA (ColabFold's results
  // directory reused as --msa-dir); writing it again replaces it atomically.
  std::error_code ec;
  // The marker first: killed half-way, the job is not done, whatever remains.
  fs::remove(done_marker(dir, job), ec);
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    bool match = single.count(name) > 0;
    for (const auto& [prefix, ext] : unranked) {
      const bool unranked_file = name.rfind(prefix, 0) == 0 &&
                                 name.size() > prefix.size() + ext.size() &&
                                 name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
      const bool kept =
          unranked_file &&
          keep_tags.contains(name.substr(prefix.size(), name.size() - prefix.size() - ext.size()));
      match = match || (unranked_file && !kept);
    }
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
