// ParamScope: where one AF2 module's parameters live in a WeightStore. AF2 names a parameter
// `<scope>//<name>` (e.g. `.../msa_transition/transition1//weights`); repeated blocks are stacked
// on axis 0, so a block's view is one index of that axis.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "io/weight_store.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"

namespace cpufold {

class ParamScope {
 public:
  // `path` below the AF2 prefix, e.g. "evoformer/evoformer_iteration"; `block` >= 0 selects a
  // block of a stack of `n_blocks` (the file then holds [n_blocks, shape...]). `source`: what
  // the Linears built from this scope and every scope made from it use (the model's weight
  // cache, the compute precision). Without a path: the file's root, from which a model's
  // modules take their scopes (at()); a WeightStore converts to it, private f32 Linears.
  ParamScope(const WeightStore& store, std::string path = "", std::int64_t block = -1,
             std::int64_t n_blocks = 0, const LinearSource& source = {});

  // The scope one level down: ("…/msa_transition") / "transition1".
  ParamScope operator/(std::string_view child) const;
  // Another module's scope in the same file with the same Linear source.
  ParamScope at(std::string path, std::int64_t block = -1, std::int64_t n_blocks = 0) const;
  // This scope with its Linears computing in `precision` (the trunk's stacks).
  ParamScope with_precision(DType precision) const;

  // The view of `<scope>//<name>` with per-block shape `shape`, checked against the file.
  Tensor get(std::string_view name, const Shape& shape) const;

  // Linear from `weights` ([c_in axes..., c_out axes...]) and, if `bias`, `bias` ([c_out axes]),
  // from linear_source().
  Linear linear(const Shape& weights, int in_axes = 1, bool bias = true) const;
  // LayerNorm from `scale` and `offset`, both [c].
  LayerNorm layer_norm(std::int64_t c) const;

  const std::string& path() const { return path_; }
  const WeightStore& store() const { return store_; }
  // The weight cache and precision every Linear of this scope is built with.
  const LinearSource& linear_source() const { return source_; }

 private:
  const WeightStore& store_;
  std::string path_;
  std::int64_t block_;
  std::int64_t n_blocks_;
  LinearSource source_;
};

}  // namespace cpufold
