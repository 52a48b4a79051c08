#include "ops/dnnl_context.h"

#include <omp.h>
#include <pthread.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace cpufold {

std::recursive_mutex& primitive_build_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

namespace {

// dnnl_sgemm generates its jit kernels once, on its first call, unchecked like the primitives
// (see kPrimitiveHeadroom). Our first call would be inside an OpenMP region; make it here,
// outside any, after the headroom check, for each transposition the callers use.
// Small row counts (a few heads of global attention, a chunk of one row) take kernels of their
// own, generated on first use like the others.
void generate_sgemm_kernels() {
  constexpr dnnl_dim_t n = 64;
  std::vector<float> a(n * n, 1.f), b(n * n, 1.f), c(n * n);
  for (const char* ops : {"NN", "NT", "TN"}) {
    for (const dnnl_dim_t m : {n, dnnl_dim_t{1}, dnnl_dim_t{4}}) {
      const dnnl_status_t status =
          dnnl_sgemm(ops[0], ops[1], m, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
      if (status == dnnl_out_of_memory) throw out_of_memory("generating oneDNN's sgemm kernels");
      if (status != dnnl_success)
        throw InternalError("oneDNN's sgemm failed on a " + std::to_string(m) +
                            " x 64 product (status " + std::to_string(static_cast<int>(status)) +
                            ")");
    }
  }
}

// Free address space for generating sgemm's kernels: some dozens of jit kernels at once,
// more than 16 MiB at once with oneDNN 2.6 on AVX-512 (8 and 16 MiB margins still failed
// under ulimit -v with two threads).
constexpr std::size_t kSgemmHeadroom = std::size_t{64} << 20;

// Bytes of stack each new thread maps (OMP_STACKSIZE, else glibc's default from ulimit -s).
std::size_t thread_stack_bytes() {
  pthread_attr_t attr;
  std::size_t bytes = std::size_t{8} << 20;
  if (::pthread_getattr_default_np(&attr) == 0) {
    ::pthread_attr_getstacksize(&attr, &bytes);
    ::pthread_attr_destroy(&attr);
  }
  if (const char* env = std::getenv("OMP_STACKSIZE"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double value = std::strtod(env, &end);
    const char unit = end && *end ? static_cast<char>(std::toupper(*end)) : 'K';
    const double scale = unit == 'B' ? 1 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1 << 10;
    if (value > 0) bytes = static_cast<std::size_t>(value * scale);
  }
  return bytes;
}

// oneDNN's primitive cache shares one jit kernel among the Linears of equal shape (the 48
// Evoformer blocks), but by default keeps 1024 primitives, whose code a batch of many lengths
// fills with shapes it will not see again (≈ 40 MiB measured with the tiny test weights). One
// length needs far fewer distinct primitives than this (README, "Memory over a batch").
constexpr int kPrimitiveCacheCapacity = 256;

// The capacity, unless the user set oneDNN's own variable.
void bound_primitive_cache() {
  for (const char* name : {"ONEDNN_PRIMITIVE_CACHE_CAPACITY", "DNNL_PRIMITIVE_CACHE_CAPACITY"}) {
    if (const char* env = std::getenv(name); env != nullptr && *env != '\0') return;
  }
  dnnl::set_primitive_cache_capacity(kPrimitiveCacheCapacity);
}

}  // namespace

DnnlContext::DnnlContext() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  // Start the OpenMP team now, while we can still say no: libgomp exits the process when it
  // cannot map a thread's stack, and a thread started inside oneDNN would take the headroom
  // the check below counted on.
  require_address_space(
      kSgemmHeadroom + static_cast<std::size_t>(omp_get_max_threads()) * thread_stack_bytes(),
      "starting " + std::to_string(omp_get_max_threads()) + " OpenMP thread(s)");
#pragma omp parallel
  {
    // Each thread's first malloc picks its glibc arena (a new one maps 64 MiB of address
    // space, or it falls back to a shared one): let that happen here, not inside oneDNN.
    std::free(std::malloc(64));
  }
  build_primitive("sgemm", generate_sgemm_kernels);
  bound_primitive_cache();
}

DnnlContext& DnnlContext::instance() {
  static DnnlContext context;
  return context;
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
}

}  // namespace cpufold
