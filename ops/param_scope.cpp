#include "ops/param_scope.h"

namespace cpufold {

ParamScope::ParamScope(const WeightStore& store, std::string path, std::int64_t block,
                       std::int64_t n_blocks, const LinearSource& source)
    : store_(store), path_(std::move(path)), block_(block), n_blocks_(n_blocks), source_(source) {}

ParamScope ParamScope::operator/(std::string_view child) const {
  return ParamScope(store_, path_ + "/" + std::string(child), block_, n_blocks_, source_);
}

ParamScope ParamScope::at(std::string path, std::int64_t block, std::int64_t n_blocks) const {
  return ParamScope(store_, std::move(path), block, n_blocks, source_);
}

ParamScope ParamScope::with_precision(DType precision) const {
  ParamScope s = *this;
  s.source_.precision = precision;
  return s;
}

Tensor ParamScope::get(std::string_view name, const Shape& shape) const {
  const std::string key = std::string(kAf2Prefix) + path_ + "//" + std::string(name);
  if (block_ < 0) return store_.require(key, shape);
  Shape stacked{n_blocks_};
  for (std::int64_t d : shape.dims()) stacked.push_back(d);
  return store_.require(key, stacked).select(0, block_);
}

Linear ParamScope::linear(const Shape& weights, int in_axes, bool bias) const {
  Shape bias_shape;
  for (int a = in_axes; a < weights.rank(); ++a) bias_shape.push_back(weights[a]);
  return Linear(get("weights", weights), bias ? get("bias", bias_shape) : Tensor(), in_axes,
                source_);
}

LayerNorm ParamScope::layer_norm(std::int64_t c) const {
  return LayerNorm(get("scale", {c}), get("offset", {c}));
}

}  // namespace cpufold
