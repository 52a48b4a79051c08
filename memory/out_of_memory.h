// Running out of memory ends the job with a BudgetError (exit 4) that says what limit was hit
// and what to do, never with a crash: some libraries (oneDNN's jit code generator) do not
// survive a failed allocation, so callers check for headroom before calling into them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "memory/error.h"

namespace cpufold {

// "address-space limit (ulimit -v) 125.0 MiB, 2048.0 MiB available": what is known of the
// process's limits, for error messages.
std::string memory_limits_note();

// BudgetError "<what>: out of memory (<limits>); give cpufold more memory or pass --chunk-size
// to bound transient memory".
BudgetError out_of_memory(std::string_view what);

// Throws out_of_memory(what) unless `bytes` of address space can be mapped right now (the
// mapping is PROT_NONE and released at once: it commits nothing).
void require_address_space(std::size_t bytes, std::string_view what);

}  // namespace cpufold
