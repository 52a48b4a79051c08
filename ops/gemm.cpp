#include "ops/gemm.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <oneapi/dnnl/dnnl.hpp>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "memory/out_of_memory.h"
#include "ops/dnnl_context.h"
#include "ops/recently_used.h"

namespace cpufold::detail {
namespace {

using dnnl::memory;

// C = beta·C, what BLAS defines for an empty inner dimension (e.g. an outer product mean over
// zero MSA rows); oneDNN 2.6's dnnl_sgemm returns without touching C.
bool scale_only(std::int64_t m, std::int64_t n, float beta, float* c, std::int64_t ldc) {
  if (m < 0 || n < 0 || (m > 0 && ldc < n)) return false;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
  return true;
}

struct GemmKey {
  bool bf16_inputs, trans_a, trans_b, in_parallel;
  int threads;
  std::int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  bool operator==(const GemmKey&) const = default;
};

// One primitive with its memory objects and scratchpad, made once: a call only swaps handles.
struct GemmPlan {
  GemmKey key;
  dnnl::matmul matmul;
  memory src, wei, dst, pad;
  std::vector<std::byte> pad_bytes;
  std::unordered_map<int, memory> args;
};

memory::desc matrix_desc(std::int64_t rows, std::int64_t cols, std::int64_t ld, bool transposed,
                         memory::data_type type) {
  // A transposed operand is stored [cols, rows] with leading dimension ld.
  return memory::desc({rows, cols}, type, transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

GemmPlan build_plan(const GemmKey& key, const dnnl::engine& engine) {
  using dt = memory::data_type;
  const dt in = key.bf16_inputs ? dt::bf16 : dt::f32;
  const auto src = matrix_desc(key.m, key.k, key.lda, key.trans_a, in);
  const auto wei = matrix_desc(key.k, key.n, key.ldb, key.trans_b, in);
  const auto dst = matrix_desc(key.m, key.n, key.ldc, false, dt::f32);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (key.alpha != 1.f) attr.set_output_scales(0, {key.alpha});
  if (key.beta != 0.f) {
    dnnl::post_ops ops;
    ops.append_sum(key.beta);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr, engine);
  GemmPlan plan;
  plan.key = key;
  plan.matmul = dnnl::matmul(pd);
  plan.src = memory(src, engine, DNNL_MEMORY_NONE);
  plan.wei = memory(wei, engine, DNNL_MEMORY_NONE);
  plan.dst = memory(dst, engine, DNNL_MEMORY_NONE);
  plan.args = {{DNNL_ARG_SRC, plan.src}, {DNNL_ARG_WEIGHTS, plan.wei}, {DNNL_ARG_DST, plan.dst}};
  if (const auto pad = pd.scratchpad_desc(); pad.get_size() > 0) {
    plan.pad_bytes.resize(pad.get_size());
    plan.pad = memory(pad, engine, plan.pad_bytes.data());
    plan.args.emplace(DNNL_ARG_SCRATCHPAD, plan.pad);
  }
  return plan;
}

}  // namespace

}  // namespace cpufold::detail

namespace cpufold {

using detail::GemmKey;
using detail::GemmPlan;

// One thread's primitives, in the RecentlyUsed cache Linear keeps its plans in; what they hold
// counts in their GemmCache's scratch_held_.
struct GemmCache::Slot {
  detail::RecentlyUsed<GemmKey, GemmPlan> plans{detail::kGemmCacheCapacity};
  dnnl::stream stream;
  std::atomic<std::size_t>& scratch_held;

  explicit Slot(std::atomic<std::size_t>& held) : scratch_held(held) {}
  ~Slot() {
    for (const auto& [key, plan] : plans) scratch_held -= plan.pad_bytes.size();
  }

  GemmPlan& find(const GemmKey& key) {
    const dnnl::engine& engine = DnnlContext::instance().engine();
    if (!stream) stream = dnnl::stream(engine);
    if (GemmPlan* hit = plans.find(key)) return *hit;
    GemmPlan built = build_primitive("a matmul", [&] { return detail::build_plan(key, engine); });
    if (plans.full()) scratch_held -= plans.least_recent().pad_bytes.size();
    GemmPlan& plan = plans.insert(key, std::move(built));
    scratch_held += plan.pad_bytes.size();
    return plan;
  }
};

GemmCache::GemmCache() : GemmCache(omp_get_max_threads()) {}

GemmCache::GemmCache(int threads) {
  for (int t = 0; t < threads; ++t) slots_.push_back(std::make_unique<Slot>(scratch_held_));
}

GemmCache::~GemmCache() = default;

void GemmCache::note_out_of_memory(const std::string& message) {
  bool expected = false;
  if (out_of_memory_.compare_exchange_strong(expected, true)) out_of_memory_message_ = message;
}

void GemmCache::throw_if_out_of_memory() const {
  if (out_of_memory_.load()) throw BudgetError(out_of_memory_message_);
}

GemmCache::Slot* GemmCache::slot(int thread) {
  return thread >= 0 && static_cast<std::size_t>(thread) < slots_.size() ? slots_[thread].get()
                                                                         : nullptr;
}

}  // namespace cpufold

namespace cpufold::detail {

bool sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) noexcept {
  if (k == 0) return scale_only(m, n, beta, c, ldc);
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta,
                    c, ldc) == dnnl_success;
}

namespace {

// gemm_bf16 and gemm_f32: T is bf16 or float.
template <typename T>
bool cached_matmul(GemmCache& cache, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, float alpha, const T* a, std::int64_t lda, const T* b,
                   std::int64_t ldb, float beta, float* c, std::int64_t ldc) noexcept {
  if (m == 0 || n == 0) return m >= 0 && n >= 0;
  if (k == 0) return scale_only(m, n, beta, c, ldc);
  GemmCache::Slot* slot = cache.slot(omp_get_thread_num());
  if (slot == nullptr) return false;
  try {
    const bool in_parallel = omp_in_parallel() != 0;
    const GemmKey key{std::is_same_v<T, bf16>,
                      trans_a,
                      trans_b,
                      in_parallel,
                      in_parallel ? 1 : omp_get_max_threads(),
                      m,
                      n,
                      k,
                      lda,
                      ldb,
                      ldc,
                      alpha,
                      beta};
    GemmPlan& plan = slot->find(key);
    plan.src.set_data_handle(const_cast<T*>(a));
    plan.wei.set_data_handle(const_cast<T*>(b));
    plan.dst.set_data_handle(c);
    plan.matmul.execute(slot->stream, plan.args);
    slot->stream.wait();
    return true;
  } catch (const BudgetError& e) {
    cache.note_out_of_memory(e.what());
    return false;
  } catch (const std::bad_alloc&) {
    cache.note_out_of_memory(out_of_memory("a oneDNN matmul's scratchpad").what());
    return false;
  } catch (...) {
    return false;
  }
}

}  // namespace

bool gemm_bf16(GemmCache& cache, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
               std::int64_t k, float alpha, const bf16* a, std::int64_t lda, const bf16* b,
               std::int64_t ldb, float beta, float* c, std::int64_t ldc) noexcept {
  return cached_matmul(cache, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

bool gemm_f32(GemmCache& cache, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
              std::int64_t ldb, float beta, float* c, std::int64_t ldc) noexcept {
  return cached_matmul(cache, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace cpufold::detail
