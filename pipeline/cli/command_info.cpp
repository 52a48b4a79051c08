// `cpufold info PARAMS`: what model a parameter file holds.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "pipeline/cli/cli.h"
#include "pipeline/runner/model_loader.h"

namespace cpufold {
namespace {

nlohmann::json config_json(const ModelConfig& c, const std::string& preset) {
  auto att = [](const AttentionDims& a) {
    return nlohmann::json{{"n_head", a.n_head}, {"c_hidden", a.c_hidden}};
  };
  return {
      {"preset", preset},
      {"preset_family", c.preset_family()},
      {"templates", c.templates},
      {"ptm_head", c.ptm_head},
      {"c_m", c.c_m},
      {"c_z", c.c_z},
      {"c_s", c.c_s},
      {"c_e", c.c_e},
      {"c_t", c.c_t},
      {"evoformer_blocks", c.n_evoformer_blocks},
      {"extra_msa_blocks", c.n_extra_msa_blocks},
      {"template_blocks", c.n_template_blocks},
      {"structure_layers", c.n_structure_layers},
      {"msa_row_attention", att(c.msa_row_attention)},
      {"msa_column_attention", att(c.msa_column_attention)},
      {"triangle_attention", att(c.triangle_attention)},
      {"extra_msa_row_attention", att(c.extra_msa_row_attention)},
      {"extra_msa_global_attention", att(c.extra_msa_global_attention)},
      {"template_pointwise_attention", att(c.template_pointwise_attention)},
      {"ipa",
       {{"n_head", c.n_head_ipa},
        {"c_hidden", c.c_ipa},
        {"qk_points", c.n_qk_points},
        {"v_points", c.n_v_points}}},
      {"parameters", c.parameter_count},
  };
}

}  // namespace

void add_info_command(CLI::App& app) {
  struct Args {
    std::string params;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Print the model configuration detected from an AlphaFold2 parameter file.");
  cmd->add_option("PARAMS", args->params, "AF2 parameters (.npz) or a cpufold HDF5 copy (.h5)")
      ->required();
  cmd->add_flag("--json", args->json, "Print the configuration as JSON");
  cmd->callback([args] {
    const ModelWeights weights = open_model_weights(args->params);
    const WeightStore& store = weights.store;
    const ModelConfig& config = weights.config;
    const std::string& preset = weights.preset;
    const auto& attrs = store.attributes();
    const std::string source =
        attrs.contains("source_file") ? attrs.at("source_file") : store.path().filename().string();
    if (args->json) {
      std::cout << config_json(config, preset).dump(2) << "\n";
      return;
    }
    std::cout << "file:                 " << store.path().string() << " ("
              << (store.format() == WeightStore::Format::npz ? "AF2 npz" : "cpufold HDF5")
              << (attrs.contains("source_file") ? ", converted from " + source : std::string())
              << ")\n"
              << "preset:               " << preset << "\n"
              << config.describe();
  });
}

}  // namespace cpufold
