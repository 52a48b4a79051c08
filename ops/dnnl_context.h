// DnnlContext: the process's one oneDNN CPU engine and stream. Every primitive in ops/ runs
// on it; oneDNN's own OpenMP pool does the threading.
#pragma once

#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>

#include "memory/error.h"
#include "memory/out_of_memory.h"

namespace cpufold {

class DnnlContext {
 public:
  // Created on first use; lives until exit. Also generates oneDNN's sgemm kernels, so that
  // no OpenMP region is the first to call sgemm. Throws BudgetError when memory is short.
  static DnnlContext& instance();

  const dnnl::engine& engine() const { return engine_; }
  // In-order CPU stream. Primitives are submitted from the model's one thread; parallelism
  // lives inside them (oneDNN's OpenMP team).
  dnnl::stream& stream() { return stream_; }

  DnnlContext(const DnnlContext&) = delete;
  DnnlContext& operator=(const DnnlContext&) = delete;

 private:
  DnnlContext();

  dnnl::engine engine_;
  dnnl::stream stream_;
};

// True when oneDNN fell back to its reference implementation for `pd`: correct, but one to
// three orders of magnitude slower than a jit kernel, so callers choose another plan.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);

// Free address space required before oneDNN builds a primitive. oneDNN 2.6's jit code
// generator does not check its own allocations: when one fails it writes through a null
// buffer (a segfault in dnnl_primitive_create, seen under `ulimit -v`). No primitive build
// here maps more than a few MiB, so this margin turns that crash into a BudgetError.
inline constexpr std::size_t kPrimitiveHeadroom = std::size_t{8} << 20;

// Held while a primitive is built: builds on several threads at once (products first used
// inside a parallel region) would each pass the headroom check and then share the margin.
// Recursive: a build may build another.
std::recursive_mutex& primitive_build_mutex();

// Runs `build`, which creates oneDNN primitives or primitive descriptors for `what`, after
// the headroom check, one build at a time; a dnnl::error becomes a BudgetError (out of memory)
// or InternalError.
template <typename F>
decltype(auto) build_primitive(const std::string& what, F&& build) {
  const std::lock_guard lock(primitive_build_mutex());
  require_address_space(kPrimitiveHeadroom, "building the oneDNN kernel for " + what);
  try {
    return std::forward<F>(build)();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_out_of_memory)
      throw out_of_memory("building the oneDNN kernel for " + what);
    throw InternalError("oneDNN failed building the kernel for " + what + ": " + e.what());
  }
}

}  // namespace cpufold
