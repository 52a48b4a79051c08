#include "memory/tensor.h"

#include <sstream>

namespace cpufold {

Shape::Shape(std::initializer_list<std::int64_t> dims)
    : Shape(std::span(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const std::int64_t> dims) {
  if (dims.size() > kMaxRank) {
    throw InternalError("tensor rank " + std::to_string(dims.size()) + " exceeds the maximum " +
                        std::to_string(kMaxRank));
  }
  for (std::int64_t d : dims) push_back(d);
}

void Shape::push_back(std::int64_t d) {
  if (rank_ == kMaxRank) throw InternalError("tensor rank exceeds the maximum");
  if (d < 0) throw InternalError("negative tensor dimension " + std::to_string(d));
  dims_[static_cast<std::size_t>(rank_++)] = d;
}

std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims()) n *= d;
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if ((*this)[i] != o[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::ostringstream s;
  s << '[';
  for (int i = 0; i < rank_; ++i) s << (i ? ", " : "") << (*this)[i];
  s << ']';
  return s.str();
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = shape;
  std::int64_t step = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

Tensor::Tensor(void* data, DType dtype, const Shape& shape)
    : Tensor(data, dtype, shape, contiguous_strides(shape)) {}

Tensor::Tensor(void* data, DType dtype, const Shape& shape, const Shape& strides)
    : data_(data), dtype_(dtype), shape_(shape), strides_(strides) {
  if (shape.rank() != strides.rank()) {
    throw InternalError("tensor shape " + shape.str() + " and strides " + strides.str() +
                        " differ in rank");
  }
}

int Tensor::normalize_axis(int axis) const {
  const int r = rank();
  const int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) {
    throw InternalError("axis " + std::to_string(axis) + " out of range for " + describe());
  }
  return a;
}

std::int64_t Tensor::dim(int axis) const {
  return shape_[normalize_axis(axis)];
}
std::int64_t Tensor::stride(int axis) const {
  return strides_[normalize_axis(axis)];
}

bool Tensor::is_contiguous() const {
  std::int64_t step = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != step) return false;
    step *= shape_[i];
  }
  return true;
}

void Tensor::check_dtype(DType expected) const {
  if (expected != dtype_) {
    throw InternalError("tensor " + describe() + " accessed as " +
                        std::string(dtype_name(expected)));
  }
}

std::int64_t Tensor::offset_of(std::initializer_list<std::int64_t> index) const {
  if (static_cast<int>(index.size()) != rank()) {
    throw InternalError("index of rank " + std::to_string(index.size()) + " into " + describe());
  }
  std::int64_t off = 0;
  int axis = 0;
  for (std::int64_t i : index) {
    if (i < 0 || i >= shape_[axis]) {
      throw InternalError("index " + std::to_string(i) + " out of bounds on axis " +
                          std::to_string(axis) + " of " + describe());
    }
    off += i * strides_[axis++];
  }
  return off;
}

Tensor Tensor::slice(int axis, std::int64_t begin, std::int64_t end) const {
  const int a = normalize_axis(axis);
  if (begin < 0 || end < begin || end > shape_[a]) {
    throw InternalError("slice [" + std::to_string(begin) + ", " + std::to_string(end) +
                        ") out of range on axis " + std::to_string(a) + " of " + describe());
  }
  Shape shape = shape_;
  shape[a] = end - begin;
  auto* base = static_cast<std::byte*>(data_) +
               begin * strides_[a] * static_cast<std::int64_t>(dtype_size(dtype_));
  return Tensor(base, dtype_, shape, strides_);
}

Tensor Tensor::select(int axis, std::int64_t index) const {
  const int a = normalize_axis(axis);
  Tensor one = slice(a, index, index + 1);
  Shape shape, strides;
  for (int i = 0; i < rank(); ++i) {
    if (i == a) continue;
    shape.push_back(shape_[i]);
    strides.push_back(strides_[i]);
  }
  return Tensor(one.data_, dtype_, shape, strides);
}

Tensor Tensor::transpose(int a, int b) const {
  const int x = normalize_axis(a), y = normalize_axis(b);
  Shape shape = shape_, strides = strides_;
  std::swap(shape[x], shape[y]);
  std::swap(strides[x], strides[y]);
  return Tensor(data_, dtype_, shape, strides);
}

Tensor Tensor::reshape(const Shape& shape) const {
  if (!is_contiguous()) throw InternalError("reshape of non-contiguous tensor " + describe());
  if (shape.numel() != numel()) {
    throw InternalError("reshape of " + describe() + " to " + shape.str() +
                        " changes the element count");
  }
  return Tensor(data_, dtype_, shape);
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_.str();
}

}  // namespace cpufold
