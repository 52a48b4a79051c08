#include "pipeline/batch/finished_runs.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "io/blob_cache_file.h"
#include "io/content_hash.h"
#include "memory/error.h"
#include "pipeline/batch/predict.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::string_view kSuffix = ".finished";

std::span<const std::byte> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::span<const std::byte> bytes_of(const std::vector<float>& v) {
  return {reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(float)};
}

std::string text_of(const Blob& b) {
  return {reinterpret_cast<const char*>(b.data.data()), b.data.size()};
}

std::vector<float> floats_of(const Blob& b) {
  if (b.data.size() % sizeof(float) != 0) throw std::runtime_error("not floats");
  std::vector<float> v(b.data.size() / sizeof(float));
  std::memcpy(v.data(), b.data.data(), b.data.size());
  return v;
}

}  // namespace

std::string features_hash(const RawFeatures& raw) {
  ContentHash hash;
  hash.add(raw.sequence.data(), raw.sequence.size());
  hash.add_values(raw.aatype);
  hash.add_values(raw.residue_index);
  hash.add_values(raw.msa);
  hash.add_values(raw.deletion_matrix);
  const RawTemplates& t = raw.templates;
  hash.add_values(t.aatype_one_hot);
  hash.add_values(t.all_atom_positions);
  hash.add_values(t.all_atom_mask);
  hash.add_values(t.sum_probs);
  return hash.hex();
}

std::string finished_run_key(std::string_view output_settings, const std::string& params_hash,
                             const std::string& features, int model_number, std::uint64_t seed) {
  return "cpufold finished model run 1\nsettings " + std::string(output_settings) + "\nparams " +
         params_hash + "\nfeatures " + features + "\nmodel " + std::to_string(model_number) +
         " seed " + std::to_string(seed) + "\n";
}

fs::path finished_run_path(const fs::path& output_dir, const std::string& job,
                           const std::string& tag) {
  return job_logs_dir(output_dir) / (job + "." + tag + std::string(kSuffix));
}

void save_finished_run(const fs::path& path, const std::string& key, const FinishedRun& run) {
  const RenderedPrediction& r = run.prediction;
  Json info;
  info["model_number"] = r.model_number;
  info["seed"] = r.seed;
  info["tag"] = r.tag;
  info["mean_plddt"] = r.mean_plddt;
  info["has_pae"] = r.has_pae;
  info["ptm"] = r.ptm;
  info["max_pae"] = r.max_pae;
  info["score"] = r.score;
  info["unranked"] = Json::array();
  for (const auto& u : r.unranked) info["unranked"].push_back({u.kind, u.ext});
  info["timing"] = Json::parse(run_timing_json(run.timing));
  const std::string info_text = info.dump();
  std::vector<Blob> blobs = {{"info", bytes_of(info_text)},  {"pdb", bytes_of(r.pdb)},
                             {"cif", bytes_of(r.cif)},       {"scores", bytes_of(r.scores)},
                             {"pae_v1", bytes_of(r.pae_v1)}, {"plddt", bytes_of(r.plddt)},
                             {"pae", bytes_of(r.pae)}};
  for (const std::string& pdb : r.recycle_pdbs) blobs.push_back({"recycle_pdb", bytes_of(pdb)});
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  try {
    write_blob_cache(path, key, blobs);
  } catch (const InputError&) {
    // Only a resume after a kill needs it.
  }
}

std::optional<FinishedRun> load_finished_run(const fs::path& path, const std::string& key) {
  BlobCacheLoad load = load_blob_cache(path, key);
  if (!load.cache) return std::nullopt;
  const std::vector<Blob>& blobs = load.cache->blobs;
  constexpr const char* kOrder[] = {"info", "pdb", "cif", "scores", "pae_v1", "plddt", "pae"};
  if (blobs.size() < std::size(kOrder)) return std::nullopt;
  for (std::size_t i = 0; i < std::size(kOrder); ++i) {
    if (blobs[i].meta != kOrder[i]) return std::nullopt;
  }
  try {
    FinishedRun run;
    RenderedPrediction& r = run.prediction;
    const Json info = Json::parse(text_of(blobs[0]));
    r.model_number = info.at("model_number").get<int>();
    r.seed = info.at("seed").get<std::uint64_t>();
    r.tag = info.at("tag").get<std::string>();
    r.mean_plddt = info.at("mean_plddt").get<double>();
    r.has_pae = info.at("has_pae").get<bool>();
    r.ptm = info.at("ptm").get<double>();
    r.max_pae = info.at("max_pae").get<float>();
    r.score = info.at("score").get<double>();
    for (const auto& u : info.at("unranked"))
      r.unranked.push_back({u.at(0).get<std::string>(), u.at(1).get<std::string>()});
    run.timing = run_timing_from_json(info.at("timing").dump());
    r.pdb = text_of(blobs[1]);
    r.cif = text_of(blobs[2]);
    r.scores = text_of(blobs[3]);
    r.pae_v1 = text_of(blobs[4]);
    r.plddt = floats_of(blobs[5]);
    r.pae = floats_of(blobs[6]);
    for (std::size_t i = std::size(kOrder); i < blobs.size(); ++i) {
      if (blobs[i].meta != "recycle_pdb") return std::nullopt;
      r.recycle_pdbs.push_back(text_of(blobs[i]));
    }
    return run;
  } catch (const std::exception&) {
    return std::nullopt;  // cpufold's own file, but not of this version: run the model again
  }
}

void remove_finished_runs(const fs::path& output_dir, const std::string& job) {
  const fs::path dir = job_logs_dir(output_dir);
  const std::string prefix = job + ".";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() + kSuffix.size() || name.rfind(prefix, 0) != 0 ||
        !name.ends_with(kSuffix)) {
      continue;
    }
    // The tag holds no '.': "a.b.TAG.finished" is job a.b's, not job a's.
    const std::string_view tag =
        std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - kSuffix.size());
    if (tag.find('.') == std::string_view::npos) fs::remove(e.path(), ec);
  }
}

}  // namespace cpufold
