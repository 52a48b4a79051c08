#include "pipeline/runner/model_loader.h"

#include <chrono>

#include "memory/error.h"

namespace cpufold {
namespace {

void require_type(const ModelWeights& w, ModelType type) {
  if (type == ModelType::alphafold2_ptm && !w.config.ptm_head) {
    throw WeightsError(w.store.path().string() +
                       " has no predicted-aligned-error head: it is not an alphafold2_ptm "
                       "(params_model_N_ptm) file; use --model-type alphafold2 for it");
  }
}

void refuse_unused_parameters(const WeightStore& store) {
  const auto unused = store.unused_keys();
  if (!unused.empty()) {
    throw WeightsError(std::to_string(unused.size()) + " parameters in " + store.path().string() +
                       " are not used by the model, e.g. " + unused.front());
  }
}

}  // namespace

ModelWeights open_model_weights(const std::filesystem::path& params) {
  WeightStore store = WeightStore::open(params);
  ModelConfig config = ModelConfig::from_weights(store);
  const auto& attrs = store.attributes();
  const std::string source =
      attrs.contains("source_file") ? attrs.at("source_file") : store.path().filename().string();
  std::string preset = config.preset_for_file(source);
  return {std::move(store), std::move(config), std::move(preset)};
}

void require_templates(const ModelWeights& w, std::int64_t templates) {
  if (templates > 0 && !w.config.templates) {
    throw InputError("--templates " + std::to_string(templates) + ": " + w.preset + " (" +
                     w.store.path().filename().string() +
                     ") has no template embedding; give --templates 0");
  }
}

LoadedModel load_model(const std::filesystem::path& params, const ModelRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  LoadedModel model{open_model_weights(params), nullptr, 0};
  if (request.type) require_type(model.weights, *request.type);
  require_templates(model.weights, request.templates);
  model.runner =
      std::make_unique<ModelRunner>(model.weights.store, model.weights.config, request.precision);
  refuse_unused_parameters(model.weights.store);
  // The runner holds or maps what it needs.
  model.weights.store.release_values();
  model.load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return model;
}

}  // namespace cpufold
