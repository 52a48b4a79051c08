// DnnlContext: the process's one oneDNN CPU engine and stream. Every primitive in evoformer/
// runs on it; oneDNN's own OpenMP pool does the threading.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace cpufold {

class DnnlContext {
 public:
  // Created on first use; lives until exit.
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

}  // namespace cpufold
