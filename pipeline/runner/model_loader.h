// The one path from a parameter file to a model, for every command: the file opened (mapped),
// the configuration its shapes imply, and, when a command runs the model, the modules built
// from it. One place decides the checks and their messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/dtype.h"
#include "pipeline/runner/model_runner.h"
#include "pipeline/runner/params_directory.h"

namespace cpufold {

// A parameter file and the configuration read from its shapes.
struct ModelWeights {
  WeightStore store;
  ModelConfig config;
  // The AF2 preset the file is ("model_1_ptm"), named after the file it came from (a converted
  // .h5 keeps its source's name).
  std::string preset;
};

// What a command asks of the model it runs.
struct ModelRequest {
  DType precision = DType::f32;  // of the trunk's stacks (ModelRunner)
  std::optional<ModelType> type =
      std::nullopt;            // refuse a file of another type (no PAE head for _ptm)
  std::int64_t templates = 0;  // templates the runs will have: refused without an embedding
};

struct LoadedModel {
  ModelWeights weights;  // the store's values are released once the runner is built
  std::unique_ptr<ModelRunner> runner;
  double load_seconds = 0;

  const ModelConfig& config() const { return weights.config; }
  const std::filesystem::path& path() const { return weights.store.path(); }
};

// Opens `params` (.npz or cpufold .h5). WeightsError / InputError naming the file when it is
// missing, truncated or not AF2 parameters.
ModelWeights open_model_weights(const std::filesystem::path& params);

// open_model_weights, the checks of `request`, then the model built (its Linear weights in the
// shared cache) and every parameter of the file used by it (WeightsError names an unused one).
LoadedModel load_model(const std::filesystem::path& params, const ModelRequest& request);

// InputError unless a model of `weights` can take `templates` templates.
void require_templates(const ModelWeights& weights, std::int64_t templates);

}  // namespace cpufold
