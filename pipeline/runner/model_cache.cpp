#include "pipeline/runner/model_cache.h"

#include <chrono>
#include <string>

#include "memory/error.h"
#include "memory/system_memory.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

}  // namespace

ModelCache::ModelCache(std::map<int, fs::path> files, ModelType type,
                       std::optional<std::size_t> budget, DType precision)
    : files_(std::move(files)), type_(type), precision_(precision) {
  // A loaded model keeps its weights resident once (the mapped weight cache, or private
  // copies without one): about its parameter file's size, .npz or .h5.
  std::size_t estimate = 0;
  for (const auto& [n, path] : files_) {
    std::error_code ec;
    estimate += fs::file_size(path, ec);
  }
  std::size_t available = usable_memory_bytes();
  if (budget && (available == 0 || *budget < available)) available = *budget;
  keep_all_ = available == 0 || estimate < available / 2;
}

const LoadedModel& ModelCache::get(int model_number) {
  if (auto it = models_.find(model_number); it != models_.end()) return *it->second;
  if (!keep_all_) models_.clear();
  const auto start = std::chrono::steady_clock::now();
  const fs::path& path = files_.at(model_number);
  auto model = std::make_unique<LoadedModel>(LoadedModel{WeightStore::open(path), {}, nullptr, 0});
  model->config = ModelConfig::from_weights(model->store);
  if (type_ == ModelType::alphafold2_ptm && !model->config.ptm_head) {
    throw WeightsError(path.string() +
                       " has no predicted-aligned-error head: it is not an alphafold2_ptm "
                       "(params_model_N_ptm) file; use --model-type alphafold2 for it");
  }
  model->runner = std::make_unique<ModelRunner>(model->store, model->config, precision_);
  const auto unused = model->store.unused_keys();
  if (!unused.empty()) {
    throw WeightsError(std::to_string(unused.size()) + " parameters in " + path.string() +
                       " are not used by the model, e.g. " + unused.front());
  }
  model->store.release_values();
  model->load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return *models_.emplace(model_number, std::move(model)).first->second;
}

std::size_t ModelCache::other_weight_bytes(int model_number) const {
  std::size_t bytes = 0;
  for (const auto& [number, model] : models_) {
    if (number != model_number) bytes += model->runner->weight_bytes();
  }
  return bytes;
}

}  // namespace cpufold
