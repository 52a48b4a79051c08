#include "evoformer/row_kernels.h"

namespace cpufold::detail {

const RowKernels& row_kernels() {
  static const RowKernels& table = avx2_row_kernels() ? *avx2_row_kernels() : generic_row_kernels();
  return table;
}

}  // namespace cpufold::detail
