// Which precision the model's Linears compute in, and whether this CPU can: bf16 matmul inputs
// with fp32 accumulation pay off only where oneDNN has native bf16 kernels (AVX512-BF16, AMX).
#pragma once

#include <string>
#include <string_view>

#include "memory/dtype.h"

namespace cpufold {

// What oneDNN offers for bf16 matmuls on this CPU (ONEDNN_MAX_CPU_ISA included).
struct Bf16Support {
  bool available = false;  // a bf16 matmul primitive can be built (native or emulated)
  bool native = false;     // the effective ISA has AVX512-BF16 or AMX instructions
  std::string isa;         // oneDNN's effective ISA, e.g. "avx512_core_bf16"
};
// Probed once per process.
const Bf16Support& bf16_support();

// The compute precision for a --precision value: "fp32", "bf16" (InputError when this CPU
// cannot run a bf16 matmul) or "auto" (bf16 where it is native, fp32 elsewhere).
DType resolve_precision(std::string_view name);
// "bf16" or "fp32": how --precision, logs and reports name a resolved precision.
const char* precision_name(DType precision);
// One line for the log: the precision chosen for `name` and why.
std::string describe_precision(std::string_view name, DType chosen);

}  // namespace cpufold
