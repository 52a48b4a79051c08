// The models of a `cpufold predict` batch: each parameter file is opened and converted once
// and, when memory allows, kept for the whole batch (otherwise one model at a time).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "pipeline/runner/model_loader.h"

namespace cpufold {

class ModelCache {
 public:
  // `files`: model number -> parameter file. Decides from the file sizes and the available
  // memory (MemAvailable or the cgroup limit) whether every model stays loaded.
  // With a memory budget, the budget counts instead when it is lower. Models are built with
  // their trunk stacks in `precision` (ModelRunner).
  ModelCache(std::map<int, std::filesystem::path> files, ModelType type,
             std::optional<std::size_t> budget = std::nullopt, DType precision = DType::f32);

  bool keeps_all() const { return keep_all_; }
  bool is_loaded(int model_number) const { return models_.count(model_number) > 0; }

  // The model, loading it on first use (load_model; first dropping the others when they do
  // not all fit).
  const LoadedModel& get(int model_number);

  // Weight bytes resident for the loaded models other than `model_number` (what a run of that
  // model shares the process with).
  std::size_t other_weight_bytes(int model_number) const;

 private:
  std::map<int, std::filesystem::path> files_;
  ModelType type_;
  DType precision_;
  bool keep_all_ = true;
  std::map<int, std::unique_ptr<LoadedModel>> models_;
};

}  // namespace cpufold
