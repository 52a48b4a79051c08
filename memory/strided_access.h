// A pass that reads a few columns of every row of a tensor (MSA column attention, the outer
// product mean's residue slabs, the triangle updates over pair columns). When the tensor is
// spilled to a file, each page fault would otherwise read ahead the 128 KiB around it, of which
// the pass uses one page; under a memory limit the rest is dropped before the next column
// slice needs it, and the file is read many times over. For the guard's lifetime the kernel
// reads only the faulting page (MADV_RANDOM); then the default readahead returns for the row
// passes, which it serves well. On anonymous memory it changes nothing.
#pragma once

#include <cstddef>

#include "memory/tensor.h"

namespace cpufold {

class StridedAccess {
 public:
  explicit StridedAccess(const Tensor& t);
  ~StridedAccess();
  StridedAccess(const StridedAccess&) = delete;
  StridedAccess& operator=(const StridedAccess&) = delete;

 private:
  void* begin_ = nullptr;  // page-aligned
  std::size_t bytes_ = 0;
};

}  // namespace cpufold
