#include "pipeline/runner/model_cache.h"

#include <string>

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
  auto model = std::make_unique<LoadedModel>(
      load_model(files_.at(model_number), {.precision = precision_, .type = type_}));
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
