// Tensor: a non-owning view over memory that an arena or a weight file owns.
// A view is dtype + shape + element strides + pointer; slicing and transposing only change
// the shape, strides and pointer, never copy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "memory/dtype.h"
#include "memory/error.h"

namespace cpufold {

// Fixed-capacity shape so views never allocate.
class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  explicit Shape(std::span<const std::int64_t> dims);

  int rank() const { return rank_; }
  std::int64_t operator[](int axis) const { return dims_[static_cast<std::size_t>(axis)]; }
  std::int64_t& operator[](int axis) { return dims_[static_cast<std::size_t>(axis)]; }
  std::span<const std::int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  std::int64_t numel() const;
  void push_back(std::int64_t d);
  bool operator==(const Shape& o) const;
  std::string str() const;  // "[2, 32, 8]"

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  // A contiguous (C order) view.
  Tensor(void* data, DType dtype, const Shape& shape);
  // A strided view; strides are in elements.
  Tensor(void* data, DType dtype, const Shape& shape, const Shape& strides);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int rank() const { return shape_.rank(); }
  std::int64_t dim(int axis) const;  // negative axes count from the end
  std::int64_t stride(int axis) const;
  std::int64_t numel() const { return shape_.numel(); }
  bool empty() const { return data_ == nullptr; }
  bool is_contiguous() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  void* data() const { return data_; }
  // Typed pointer to the first element; throws if T is not the tensor's dtype.
  template <typename T>
  T* data_as() const {
    check_dtype(dtype_of<T>());
    return static_cast<T*>(data_);
  }
  // Checked element access: rank, bounds and dtype are verified.
  template <typename T>
  T& at(std::initializer_list<std::int64_t> index) const {
    check_dtype(dtype_of<T>());
    return static_cast<T*>(data_)[offset_of(index)];
  }

  // Elements [begin, end) along axis; same rank.
  Tensor slice(int axis, std::int64_t begin, std::int64_t end) const;
  // The sub-tensor at index along axis; rank drops by one.
  Tensor select(int axis, std::int64_t index) const;
  // Swap two axes (strides only).
  Tensor transpose(int a, int b) const;
  // New shape over the same contiguous memory; element count must match.
  Tensor reshape(const Shape& shape) const;

  std::string describe() const;  // "f32[24, 24, 16]"

 private:
  int normalize_axis(int axis) const;
  std::int64_t offset_of(std::initializer_list<std::int64_t> index) const;
  void check_dtype(DType expected) const;

  void* data_ = nullptr;
  DType dtype_ = DType::f32;
  Shape shape_;
  Shape strides_;
};

// Row-major strides for a shape.
Shape contiguous_strides(const Shape& shape);

}  // namespace cpufold
