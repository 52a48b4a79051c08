#include "ops/row_kernels.h"

#include <cstdlib>
#include <string>

#include "memory/error.h"

namespace cpufold::detail {
namespace {

RowKernelChoice parse_choice() {
  const char* env = std::getenv("CPUFOLD_ROW_KERNELS");
  const std::string value = env == nullptr ? "" : env;
  if (value.empty() || value == "auto") return RowKernelChoice::automatic;
  if (value == "generic") return RowKernelChoice::generic;
  if (value == "avx2") {
    if (avx2_row_kernels() == nullptr) {
      throw InputError(
          "CPUFOLD_ROW_KERNELS=avx2, but this CPU lacks AVX2 or FMA; use generic or auto");
    }
    return RowKernelChoice::avx2;
  }
  throw InputError("CPUFOLD_ROW_KERNELS must be auto, generic or avx2, not '" + value + "'");
}

}  // namespace

RowKernelChoice row_kernel_choice() {
  static const RowKernelChoice choice = parse_choice();
  return choice;
}

bool use_avx2() {
  return row_kernel_choice() != RowKernelChoice::generic && avx2_row_kernels() != nullptr;
}

const RowKernels& row_kernels() {
  static const RowKernels& table = use_avx2() ? *avx2_row_kernels() : generic_row_kernels();
  return table;
}

}  // namespace cpufold::detail
