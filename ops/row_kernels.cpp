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
  if (value == "avx512") {
    if (avx512_row_kernels() == nullptr) {
      throw InputError(
          "CPUFOLD_ROW_KERNELS=avx512, but this CPU lacks AVX-512 (F, BW, VL); use avx2, generic "
          "or auto");
    }
    return RowKernelChoice::avx512;
  }
  throw InputError("CPUFOLD_ROW_KERNELS must be auto, generic, avx2 or avx512, not '" + value +
                   "'");
}

const RowKernels& choose_table() {
  switch (row_kernel_choice()) {
    case RowKernelChoice::generic:
      return generic_row_kernels();
    case RowKernelChoice::avx2:
      return *avx2_row_kernels();
    case RowKernelChoice::avx512:
      return *avx512_row_kernels();
    case RowKernelChoice::automatic:
      break;
  }
  if (const RowKernels* t = avx512_row_kernels()) return *t;
  if (const RowKernels* t = avx2_row_kernels()) return *t;
  return generic_row_kernels();
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
  static const RowKernels& table = choose_table();
  return table;
}

}  // namespace cpufold::detail
