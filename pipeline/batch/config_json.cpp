#include "pipeline/batch/config_json.h"

#include <nlohmann/json.hpp>

#include "io/text_safety.h"
#include "ops/compute_precision.h"
#include "pipeline/batch/chunk_sizes_json.h"
#include "pipeline/batch/run_settings.h"

namespace cpufold {

std::string config_json(const PredictOptions& o, RankBy rank, std::size_t num_queries) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["program"] = std::string("cpufold predict ") + CPUFOLD_VERSION;
  j["input"] = text::safe_text(o.input.string());
  j["num_queries"] = num_queries;
  j["use_templates"] = o.templates;
  if (o.templates) {  // what decides the templates (pipeline/batch/job_templates.h)
    j["template_db"] = text::safe_text(o.template_db.string());
    j["custom_template_path"] = text::safe_text(o.custom_template_path.string());
    j["max_template_date"] = o.max_template_date;
  }
  j["num_relax"] = 0;
  // Where jobs without an A3M input get their MSA (an A3M input is always used).
  if (o.msa_dir.empty()) {
    j["msa_mode"] = o.single_sequence ? "single_sequence" : "input_a3m";
  } else {
    j["msa_mode"] = o.single_sequence ? "msa_dir_else_single_sequence" : "msa_dir";
  }
  j["msa_dir"] = text::safe_text(o.msa_dir.string());
  j["data_dir"] = text::safe_text(o.data_dir.string());
  j["model_type"] = model_type_name(o.model_type);
  j["num_models"] = o.num_models;
  j["num_recycles"] = o.num_recycle;
  j["recycle_early_stop_tolerance"] = o.recycle_early_stop_tolerance;
  j["num_ensemble"] = o.num_ensemble;
  j["model_order"] = o.model_order;
  j["keep_existing_results"] = !o.overwrite_existing_results;
  j["rank_by"] = rank == RankBy::ptm ? "ptm" : "plddt";
  // The depths every model runs with, as ColabFold records them (its defaults resolved).
  j["max_seq"] = o.max_seq.value_or(kColabfoldMaxSeq);
  j["max_extra_seq"] = o.max_extra_seq.value_or(kColabfoldMaxExtraSeq);
  j["random_seed"] = o.random_seed;
  j["num_seeds"] = o.num_seeds;
  const char* orders[] = {"none", "length", "msa_depth", "random"};
  j["sort_queries_by"] = orders[static_cast<int>(o.sort_queries_by)];
  j["stop_at_score"] = o.stop_at_score;
  j["jobname_prefix"] = o.jobname_prefix.empty() ? Json(nullptr) : Json(o.jobname_prefix);
  j["save_all"] = o.save_all;
  j["save_recycles"] = o.save_recycles;
  j["save_single_representations"] = o.save_single_representations;
  j["save_pair_representations"] = o.save_pair_representations;
  j["zip"] = o.zip;
  if (!o.chunks) {
    j["chunk_size"] = "auto";
  } else if (const auto uniform = o.uniform_chunk()) {
    j["chunk_size"] = *uniform;  // --chunk-size
  } else {
    j["chunk_size"] = *o.chunks;
  }
  j["mem_budget"] = o.mem_budget ? Json(*o.mem_budget) : Json(nullptr);
  j["threads"] = o.threads;
  j["precision"] = precision_name(o.precision);  // as resolved from --precision
  j["version"] = CPUFOLD_VERSION;
  return j.dump(4) + "\n";
}

std::string output_settings_json(const PredictOptions& options, RankBy rank) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(config_json(options, rank, 0));
  for (const char* how : {"input", "num_queries", "sort_queries_by", "keep_existing_results",
                          "chunk_size", "mem_budget", "threads"})
    j.erase(how);
  return j.dump();
}

}  // namespace cpufold
