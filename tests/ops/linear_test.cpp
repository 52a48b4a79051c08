#include "ops/linear.h"

#include <gtest/gtest.h>

#include "ops/compute_precision.h"
#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

struct Case {
  std::int64_t rows, c_in, c_out;
};
const Case kShapes[] = {{1, 1, 1}, {7, 33, 255}, {255, 7, 33}, {33, 256, 128}, {1000, 64, 17}};

// The double reference: activation(x·W + b) * multiply, added to y0 when accumulating.
std::vector<double> reference_linear(const Tensor& x, const std::vector<float>& w,
                                     const std::vector<float>* bias, std::int64_t c_out,
                                     const LinearEpilogue& e, const std::vector<float>& y0) {
  const std::int64_t rows = x.dim(0), c_in = x.dim(1);
  const std::vector<float> mul = e.multiply.empty() ? std::vector<float>{} : gather(e.multiply);
  std::vector<double> y(static_cast<std::size_t>(rows * c_out));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < c_out; ++o) {
      double t = bias ? (*bias)[static_cast<std::size_t>(o)] : 0.0;
      for (std::int64_t i = 0; i < c_in; ++i)
        t += at(x, {r, i}) * w[static_cast<std::size_t>(i * c_out + o)];
      if (e.activation == Activation::relu) t = std::max(t, 0.0);
      if (e.activation == Activation::sigmoid) t = 1.0 / (1.0 + std::exp(-t));
      const auto flat = static_cast<std::size_t>(r * c_out + o);
      if (!mul.empty()) t *= mul[flat];
      y[flat] = e.accumulate ? y0[flat] + t : t;
    }
  }
  return y;
}

struct Weights {
  Buffer w, b;
  Weights(std::int64_t c_in, std::int64_t c_out) : w(Shape{c_in, c_out}), b(Shape{c_out}) {
    fill_normal(w.data, 31, 1.f / std::sqrt(static_cast<float>(c_in)));
    fill_normal(b.data, 32, 0.1f);
  }
};

// v rounded to bf16 (what a bf16 Linear multiplies), as f32.
std::vector<float> bf16_rounded(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(bf16(v[i]));
  return out;
}

#define SKIP_WITHOUT_BF16()      \
  if (!bf16_support().available) \
  GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU (" << bf16_support().isa << ")"

std::string name(const Case& c, const char* what) {
  return std::string(what) + " [" + std::to_string(c.rows) + "x" + std::to_string(c.c_in) + "]x[" +
         std::to_string(c.c_in) + "x" + std::to_string(c.c_out) + "]";
}

// Runs one epilogue over every shape, with and without bias, against the reference. With bf16
// compute the reference takes x and W rounded to bf16: the products are then exact in fp32, so
// only the fp32 accumulation differs and the fp32 matmul tolerance holds.
void check_epilogue(Activation act, bool multiply, bool accumulate, const char* what,
                    DType compute = DType::f32) {
  Arena arena = test_arena();
  const bool bf = compute == DType::bf16;
  for (const Case& c : kShapes) {
    Weights p(c.c_in, c.c_out);
    for (bool with_bias : {true, false}) {
      const Linear linear(p.w.view, with_bias ? p.b.view : Tensor(), 1, compute);
      EXPECT_EQ(linear.compute(), compute);
      Buffer x(Shape{c.rows, c.c_in}), y(Shape{c.rows, c.c_out}), g(Shape{c.rows, c.c_out});
      fill_normal(x.data, 33);
      fill_normal(y.data, 34);
      fill_normal(g.data, 35);
      const auto y0 = y.data;
      LinearEpilogue e{act, multiply ? g.view : Tensor(), accumulate};
      linear.forward(x.view, y.view, arena, e);
      std::vector<float> xr = bf ? bf16_rounded(x.data) : x.data;
      const auto want = reference_linear(Tensor(xr.data(), DType::f32, x.view.shape()),
                                         bf ? bf16_rounded(p.w.data) : p.w.data,
                                         with_bias ? &p.b.data : nullptr, c.c_out, e, y0);
      expect_close(y.data, want, kF32Matmul,
                   name(c, what) + (with_bias ? " +bias" : "") + (bf ? " bf16" : ""));
      EXPECT_EQ(arena.used(), 0u) << "scratch not released";
    }
  }
}

TEST(Linear, Plain) {
  check_epilogue(Activation::none, false, false, "plain");
}
TEST(Linear, Relu) {
  check_epilogue(Activation::relu, false, false, "relu");
}
TEST(Linear, Sigmoid) {
  check_epilogue(Activation::sigmoid, false, false, "sigmoid");
}
TEST(Linear, Multiply) {
  check_epilogue(Activation::none, true, false, "multiply");
}
TEST(Linear, SigmoidMultiplyGate) {
  check_epilogue(Activation::sigmoid, true, false, "gate");
}
TEST(Linear, Accumulate) {
  check_epilogue(Activation::none, false, true, "accumulate");
}
TEST(Linear, ReluAccumulate) {
  check_epilogue(Activation::relu, false, true, "relu+accumulate");
}
TEST(Linear, GateAccumulate) {
  check_epilogue(Activation::sigmoid, true, true, "gate+accumulate");
}

TEST(Linear, Bf16ComputeMatchesRoundedReferenceForEveryEpilogue) {
  SKIP_WITHOUT_BF16();
  check_epilogue(Activation::none, false, false, "plain", DType::bf16);
  check_epilogue(Activation::relu, false, false, "relu", DType::bf16);
  check_epilogue(Activation::sigmoid, true, false, "gate", DType::bf16);
  check_epilogue(Activation::none, false, true, "accumulate", DType::bf16);
  check_epilogue(Activation::relu, false, true, "relu+accumulate", DType::bf16);
  check_epilogue(Activation::sigmoid, true, true, "gate+accumulate", DType::bf16);
}

// bf16 rounding is visible: the same Linear in fp32 differs from the bf16 one by far more than
// the fp32 tolerance (so the test above would notice an fp32 path posing as bf16).
TEST(Linear, Bf16ComputeRoundsItsInputs) {
  SKIP_WITHOUT_BF16();
  Arena arena = test_arena();
  Weights p(256, 128);
  const Linear f32(p.w.view, p.b.view), bf(p.w.view, p.b.view, 1, DType::bf16);
  Buffer x(Shape{64, 256}), y32(Shape{64, 128}), y16(Shape{64, 128});
  fill_normal(x.data, 47);
  f32.forward(x.view, y32.view, arena);
  bf.forward(x.view, y16.view, arena);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < y32.data.size(); ++i) {
    err += std::pow(y16.data[i] - y32.data[i], 2);
    norm += std::pow(y32.data[i], 2);
  }
  const double rel = std::sqrt(err / norm);
  EXPECT_GT(rel, 1e-4) << "no bf16 rounding seen";
  EXPECT_LT(rel, 1e-2) << "more than bf16 rounding";
}

// With bf16 compute a bf16 output holds the fp32 result rounded once, within the plan's
// scratch; a gated or strided bf16 output, or one from fp32 compute, is refused.
TEST(Linear, Bf16OutputIsTheRoundedResult) {
  SKIP_WITHOUT_BF16();
  Weights p(96, 72);
  {
    const Linear linear(p.w.view, p.b.view, 1, DType::bf16);
    for (const std::int64_t rows : {1, 37, 300}) {
      Buffer x(Shape{rows, 96}), y32(Shape{rows, 72}), g(Shape{rows, 72});
      fill_normal(x.data, 48);
      fill_normal(g.data, 49);
      std::vector<bf16> y16(static_cast<std::size_t>(rows * 72));
      const Tensor y(y16.data(), DType::bf16, Shape{rows, 72});
      // Plain, an activation, and the attention's gate: sigmoid(x·W + b) ⊙ g.
      for (const int e : {0, 1, 2}) {
        const Activation act = e == 0   ? Activation::none
                               : e == 1 ? Activation::relu
                                        : Activation::sigmoid;
        LinearEpilogue epilogue;
        epilogue.activation = act;
        if (e == 2) epilogue.multiply = g.view;
        EpilogueKind kind = epilogue.kind();
        kind.bf16_out = true;
        Arena exact("exact", dram_tier(), linear.scratch_bytes(rows, kind));
        linear.forward(x.view, y, exact, epilogue);
        Arena arena = test_arena();
        linear.forward(x.view, y32.view, arena, epilogue);
        std::size_t zeros = 0;
        for (std::size_t i = 0; i < y16.size(); ++i) {
          // One rounding of the fp32 result: at most half a bf16 ulp (2^-8 relative at the
          // bottom of a binade), plus the fp32 tolerance for another summation order.
          const double want = y32.data[i], got = static_cast<float>(y16[i]);
          ASSERT_LE(std::abs(got - want), std::abs(want) * 0x1p-8 + 1e-5)
              << "epilogue " << e << ", row count " << rows << " element " << i;
          zeros += got == 0.0;
        }
        if (act == Activation::relu && rows > 1) {
          EXPECT_GT(zeros, y16.size() / 4) << "no relu";
        }
      }
    }
    Buffer x(Shape{4, 96}), g(Shape{4, 72});
    std::vector<bf16> y16(4 * 72);
    const Tensor y(y16.data(), DType::bf16, Shape{4, 72});
    Arena arena = test_arena();
    // A gate or an activation with a residual add into bf16 rows: refused.
    EXPECT_THROW(linear.forward(x.view, y, arena, {Activation::none, g.view, true}), InternalError);
    EXPECT_THROW(linear.forward(x.view, y, arena, {Activation::relu, Tensor(), true}),
                 InternalError);
    std::vector<bf16> wide(4 * 100);
    const Tensor strided = Tensor(wide.data(), DType::bf16, Shape{4, 100}).slice(1, 0, 72);
    EXPECT_THROW(linear.forward(x.view, strided, arena), InternalError);
    // fp32 compute has no bf16 output.
    EXPECT_THROW(Linear(p.w.view, p.b.view).forward(x.view, y, arena), InternalError);
  }
}

// A residual add into bf16 rows (a bf16 stored MSA): y = bf16(y + x·W + b), one rounding of
// the fp32 sum, with the bias inside (not added to y first, which would round twice).
TEST(Linear, Bf16ResidualAddIntoBf16RowsRoundsTheSumOnce) {
  SKIP_WITHOUT_BF16();
  Weights p(96, 72);
  const Linear linear(p.w.view, p.b.view, 1, DType::bf16);
  for (const std::int64_t rows : {1, 37, 300}) {
    Buffer x(Shape{rows, 96}), y32(Shape{rows, 72}), base(Shape{rows, 72});
    fill_normal(x.data, 48);
    fill_normal(base.data, 49);
    std::vector<bf16> y16(static_cast<std::size_t>(rows * 72));
    for (std::size_t i = 0; i < y16.size(); ++i) {
      y16[i] = bf16(base.data[i]);
      base.data[i] = static_cast<float>(y16[i]);  // the fp32 path starts from the same values
      y32.data[i] = base.data[i];
    }
    const Tensor y(y16.data(), DType::bf16, Shape{rows, 72});
    const EpilogueKind kind{.accumulate = true, .bf16_out = true};
    Arena exact("exact", dram_tier(), linear.scratch_bytes(rows, kind));
    LinearEpilogue add;
    add.accumulate = true;
    linear.forward(x.view, y, exact, add);
    Arena arena = test_arena();
    linear.forward(x.view, y32.view, arena, add);
    double moved = 0;
    for (std::size_t i = 0; i < y16.size(); ++i) {
      const double want = y32.data[i], got = static_cast<float>(y16[i]);
      ASSERT_LE(std::abs(got - want), std::abs(want) * 0x1p-8 + 1e-5)
          << "row count " << rows << " element " << i;
      moved += std::abs(got - base.data[i]);
    }
    EXPECT_GT(moved, 0.0) << "the update was not added";
  }
  // Anything fused besides the add has no bf16 output.
  Buffer x(Shape{4, 96}), g(Shape{4, 72});
  std::vector<bf16> y16(4 * 72);
  const Tensor y(y16.data(), DType::bf16, Shape{4, 72});
  Arena arena = test_arena();
  LinearEpilogue relu_add;
  relu_add.activation = Activation::relu;
  relu_add.accumulate = true;
  EXPECT_THROW(linear.forward(x.view, y, arena, relu_add), InternalError);
}

// A bf16 input (a LayerNorm's bf16 output) is read in place: the same result as the fp32 rows
// it was rounded from, which the Linear would have rounded the same way, and no converted copy.
TEST(Linear, Bf16InputIsReadInPlace) {
  SKIP_WITHOUT_BF16();
  Weights p(96, 72);
  const Linear linear(p.w.view, p.b.view, 1, DType::bf16);
  const std::int64_t rows = 300;
  Buffer x(Shape{rows, 96}), want(Shape{rows, 72}), got(Shape{rows, 72});
  fill_normal(x.data, 50);
  std::vector<bf16> x16(x.data.size());
  for (std::size_t i = 0; i < x16.size(); ++i) x16[i] = bf16(x.data[i]);
  const Tensor xb(x16.data(), DType::bf16, Shape{rows, 96});
  Arena arena = test_arena();
  linear.forward(x.view, want.view, arena);
  const EpilogueKind in_place{.bf16_in = true};
  EXPECT_LT(linear.scratch_bytes(rows, in_place), linear.scratch_bytes(rows));
  Arena exact("exact", dram_tier(), linear.scratch_bytes(rows, in_place));
  linear.forward(xb, got.view, exact);
  EXPECT_EQ(got.data, want.data);
  // Only a bf16 Linear reads bf16, and only contiguous rows.
  EXPECT_THROW(Linear(p.w.view, p.b.view).forward(xb, got.view, arena), InternalError);
  std::vector<bf16> wide(static_cast<std::size_t>(rows * 100));
  const Tensor strided = Tensor(wide.data(), DType::bf16, Shape{rows, 100}).slice(1, 0, 96);
  EXPECT_THROW(linear.forward(strided, got.view, arena), InternalError);
}

// Strided views for a Linear [20 -> 24]: x is columns 10..30 of 50, y columns 16..40 of 64
// (the others hold 5 and must keep it), the gate columns 3..27 of 30.
struct StridedViews {
  Buffer xs, ys, gs;
  Tensor x, y, g;
  StridedViews(std::int64_t rows, std::uint32_t seed)
      : xs(Shape{rows, 50}), ys(Shape{rows, 64}, 5.f), gs(Shape{rows, 30}) {
    fill_normal(xs.data, seed);
    fill_normal(gs.data, seed + 1);
    x = xs.view.slice(1, 10, 30);
    y = ys.view.slice(1, 16, 40);
    g = gs.view.slice(1, 3, 27);
  }
  void expect_outside_y_untouched() const {
    for (std::size_t r = 0; r < static_cast<std::size_t>(x.dim(0)); ++r) {
      for (std::size_t col : {0, 15, 40, 63})
        ASSERT_EQ(ys.data[r * 64 + col], 5.f) << r << "," << col;
    }
  }
};

TEST(Linear, StridedInputOutputAndGate) {
  Arena arena = test_arena();
  const Case c{37, 20, 24};
  Weights p(c.c_in, c.c_out);
  const Linear linear(p.w.view, p.b.view);
  const StridedViews v(c.rows, 36);
  const Tensor &x = v.x, &y = v.y, &g = v.g;
  for (bool accumulate : {false, true}) {
    for (bool gate : {false, true}) {
      const auto y0 = gather(y);
      const LinearEpilogue e{gate ? Activation::sigmoid : Activation::none, gate ? g : Tensor(),
                             accumulate};
      linear.forward(x, y, arena, e);
      expect_close(
          gather(y), reference_linear(x, p.w.data, &p.b.data, c.c_out, e, y0), kF32Matmul,
          std::string("strided") + (gate ? " gate" : "") + (accumulate ? " accumulate" : ""));
    }
  }
  v.expect_outside_y_untouched();
}

// The fallback for strided views oneDNN has no jit kernel for (row blocks copied to contiguous
// staging buffers, unfused epilogue), forced so it runs on every ISA: every epilogue matches
// the reference, over several blocks and a tail, within the scratch scratch_bytes() plans.
TEST(Linear, StagedFallbackMatchesEveryEpilogueWithinPlannedScratch) {
  detail::force_linear_staging(true);
  const Case c{600, 20, 24};  // 256-row blocks: two and a tail
  Weights p(c.c_in, c.c_out);
  const Linear linear(p.w.view, p.b.view);
  detail::force_linear_staging(false);
  const StridedViews v(c.rows, 43);
  const Tensor &x = v.x, &y = v.y, &g = v.g;
  for (Activation act : {Activation::none, Activation::relu, Activation::sigmoid}) {
    for (bool accumulate : {false, true}) {
      for (bool gate : {false, true}) {
        const auto y0 = gather(y);
        const LinearEpilogue e{act, gate ? g : Tensor(), accumulate};
        const std::size_t need = linear.scratch_bytes(c.rows, e.kind());
        Arena exact("exact", dram_tier(), need);
        linear.forward(x, y, exact, e);
        const std::string what = "staged act " + std::to_string(static_cast<int>(act)) +
                                 (gate ? " gate" : "") + (accumulate ? " accumulate" : "");
        expect_close(gather(y), reference_linear(x, p.w.data, &p.b.data, c.c_out, e, y0),
                     kF32Matmul, what);
        EXPECT_LE(exact.high_water(), need) << what;
        EXPECT_GE(exact.high_water(), 256u * (20 + 24) * 4) << what << ": not staged";
      }
    }
  }
  v.expect_outside_y_untouched();
}

TEST(Linear, MultiAxisWeightsAndLeadingAxes) {
  Arena arena = test_arena();
  // AF2's query_w [c_in, n_head, c_hidden] writes q [n_batch, n_query, n_head, c_hidden], and
  // output_w [n_head, c_hidden, c_out] reads it back, with no reshapes by the caller.
  const std::int64_t c_in = 6, n_head = 4, c_hidden = 8, c_out = 12;
  Buffer wq(Shape{c_in, n_head, c_hidden}), wo(Shape{n_head, c_hidden, c_out});
  Buffer x(Shape{3, 5, c_in}), q(Shape{3, 5, n_head, c_hidden}), y(Shape{3, 5, c_out});
  fill_normal(wq.data, 38, 0.2f);
  fill_normal(wo.data, 39, 0.2f);
  fill_normal(x.data, 40);
  const Linear query(wq.view, Tensor());
  const Linear output(wo.view, Tensor(), /*in_axes=*/2);
  EXPECT_EQ(query.c_out(), n_head * c_hidden);
  EXPECT_EQ(output.c_in(), n_head * c_hidden);
  EXPECT_EQ(output.c_out(), c_out);
  EXPECT_FALSE(output.has_bias());
  query.forward(x.view, q.view, arena);
  output.forward(q.view, y.view, arena);
  expect_close(q.data,
               reference_linear(x.view.reshape(Shape{15, c_in}), wq.data, nullptr,
                                n_head * c_hidden, {}, {}),
               kF32Matmul, "query projection");
  expect_close(y.data,
               reference_linear(q.view.reshape(Shape{15, n_head * c_hidden}), wo.data, nullptr,
                                c_out, {}, {}),
               kF32Matmul, "output projection");
  Buffer wrong(Shape{3, 5, 2, 16});  // 32 elements per row, but split differently
  EXPECT_NO_THROW(output.forward(wrong.view, y.view, arena));
  Buffer bad(Shape{3, 5, 5, 8});
  EXPECT_THROW(output.forward(bad.view, y.view, arena), InternalError);
}

TEST(Linear, ManyRowCountsOnOneObject) {
  Arena arena = test_arena();
  Weights p(33, 40);
  const Linear linear(p.w.view, p.b.view);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reuses the cached primitives
    for (std::int64_t rows : {1, 8, 33, 8, 1}) {
      Buffer x(Shape{rows, 33}), y(Shape{rows, 40});
      fill_normal(x.data, static_cast<std::uint32_t>(40 + rows));
      linear.forward(x.view, y.view, arena);
      expect_close(y.data, reference_linear(x.view, p.w.data, &p.b.data, 40, {}, {}), kF32Matmul,
                   "rows " + std::to_string(rows));
    }
  }
}

// A batch of many lengths hands one object ever new row counts: it keeps at most kMaxPlans
// plans (memory flat over the batch), and a row count whose plan was dropped is rebuilt right.
TEST(Linear, PlanCacheStaysBoundedOverManyRowCounts) {
  Arena arena = test_arena();
  Weights p(16, 24);
  const Linear linear(p.w.view, p.b.view);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass rebuilds evicted plans
    for (std::int64_t rows = 1; rows <= 40; ++rows) {
      Buffer x(Shape{rows, 16}), y(Shape{rows, 24});
      fill_normal(x.data, static_cast<std::uint32_t>(100 + rows));
      linear.forward(x.view, y.view, arena);
      expect_close(y.data, reference_linear(x.view, p.w.data, &p.b.data, 24, {}, {}), kF32Matmul,
                   "rows " + std::to_string(rows) + " pass " + std::to_string(pass));
      ASSERT_LE(linear.plan_count(), Linear::kMaxPlans) << "after rows " << rows;
      EXPECT_GT(linear.scratch_bytes(rows + 1000), 0u);  // planning a length builds plans too
      ASSERT_LE(linear.plan_count(), Linear::kMaxPlans) << "after planning rows " << rows + 1000;
    }
  }
  EXPECT_EQ(linear.plan_count(), Linear::kMaxPlans) << "recent plans are kept";
}

// The staged fallback builds plans for its blocks while its own plan is in use: evicting
// either must not break a call, and the count stays bounded over many strided row counts.
TEST(Linear, StagedPlansStayBoundedOverManyRowCounts) {
  detail::force_linear_staging(true);
  Weights p(20, 24);
  const Linear linear(p.w.view, p.b.view);
  detail::force_linear_staging(false);
  Arena arena = test_arena();
  for (std::int64_t rows = 257; rows <= 280; ++rows) {  // one 256-row block and a new tail each
    Buffer xs(Shape{rows, 50}), ys(Shape{rows, 64}, 5.f), gs(Shape{rows, 30});
    fill_normal(xs.data, static_cast<std::uint32_t>(rows));
    fill_normal(gs.data, static_cast<std::uint32_t>(rows + 1));
    const Tensor x = xs.view.slice(1, 10, 30), y = ys.view.slice(1, 16, 40),
                 g = gs.view.slice(1, 3, 27);
    const auto y0 = gather(y);
    const LinearEpilogue e{Activation::sigmoid, g, true};
    linear.forward(x, y, arena, e);
    expect_close(gather(y), reference_linear(x, p.w.data, &p.b.data, 24, e, y0), kF32Matmul,
                 "staged rows " + std::to_string(rows));
    ASSERT_LE(linear.plan_count(), Linear::kMaxPlans) << "after rows " << rows;
  }
}

// The planner sizes scratch for every chunk size it weighs; a primitive (jit code, descriptors,
// memory objects: heap that stays) is built only for the row counts forward() runs.
TEST(Linear, PlanningBuildsNoPrimitive) {
  Weights p(32, 48);
  const Linear linear(p.w.view, p.b.view);
  for (std::int64_t rows : {5, 64, 300})
    for (const EpilogueKind& kind : {EpilogueKind{}, EpilogueKind{Activation::relu},
                                     EpilogueKind{Activation::none, false, true},
                                     EpilogueKind{Activation::sigmoid, true, true}})
      linear.scratch_bytes(rows, kind);
  EXPECT_GT(linear.plan_count(), 0u);
  EXPECT_EQ(linear.primitive_count(), 0u);

  Arena arena = test_arena();
  Buffer x(Shape{64, 32}), y(Shape{64, 48});
  fill_normal(x.data, 7);
  for (int call = 0; call < 2; ++call) {
    linear.forward(x.view, y.view, arena);
    expect_close(y.data, reference_linear(x.view, p.w.data, &p.b.data, 48, {}, {}), kF32Matmul,
                 "call " + std::to_string(call));
    EXPECT_EQ(linear.primitive_count(), 1u) << "call " << call;
  }
}

TEST(Linear, ScratchBytesCoverWhatForwardTakes) {
  Weights p(64, 96);
  const Linear linear(p.w.view, p.b.view);
  Buffer x(Shape{300, 64}), y(Shape{300, 96}), g(Shape{300, 96});
  fill_normal(x.data, 41);
  for (const LinearEpilogue& e :
       {LinearEpilogue{}, LinearEpilogue{Activation::none, Tensor(), true},
        LinearEpilogue{Activation::sigmoid, g.view, true}}) {
    const std::size_t need = linear.scratch_bytes(300, e.kind());
    Arena exact("exact", dram_tier(), std::max<std::size_t>(need, 64));
    EXPECT_NO_THROW(linear.forward(x.view, y.view, exact, e));
    EXPECT_LE(exact.high_water(), std::max<std::size_t>(need, 64));
  }
  EXPECT_GE(linear.scratch_bytes(300, {Activation::sigmoid, /*gated=*/true, true}), 300u * 96 * 4);
}

// A module plans its gated projection before the gate is computed: the kind alone (no forged
// gate tensor) must cover what forward() with the real gate takes. TriangleMultiplication's
// residual {gated, accumulate} goes through a [rows, c_out] buffer that a plain residual add
// does not need; 2000 rows make it larger than the staged fallback's fixed-size blocks.
TEST(Linear, ScratchBytesPlanAGateFromItsKindAlone) {
  const std::int64_t rows = 2000, c_in = 16, c_out = 96;
  Weights p(c_in, c_out);
  const Linear linear(p.w.view, p.b.view);
  Buffer x(Shape{rows, c_in}), y(Shape{rows, c_out}), g(Shape{rows, c_out});
  fill_normal(x.data, 45);
  fill_normal(g.data, 46);
  const EpilogueKind kind{.gated = true, .accumulate = true};
  const std::size_t need = linear.scratch_bytes(rows, kind);
  EXPECT_GT(need, linear.scratch_bytes(rows, {.accumulate = true}));
  const LinearEpilogue e{Activation::none, g.view, true};
  EXPECT_TRUE(e.kind().gated);
  Arena exact("exact", dram_tier(), need);
  EXPECT_NO_THROW(linear.forward(x.view, y.view, exact, e));
  EXPECT_LE(exact.high_water(), need);
}

TEST(Linear, Bf16WeightsAreConvertedOnce) {
  Arena arena = test_arena();
  Weights p(16, 8);
  std::vector<bf16> wb(p.w.data.size());
  std::vector<float> rounded(wb.size());
  for (std::size_t i = 0; i < wb.size(); ++i) {
    wb[i] = bf16(p.w.data[i]);
    rounded[i] = static_cast<float>(wb[i]);
  }
  const Linear linear(Tensor(wb.data(), DType::bf16, Shape{16, 8}), p.b.view);
  Buffer x(Shape{5, 16}), y(Shape{5, 8});
  fill_normal(x.data, 42);
  linear.forward(x.view, y.view, arena);
  expect_close(y.data, reference_linear(x.view, rounded, &p.b.data, 8, {}, {}), kF32Matmul,
               "bf16 weights");
}

// Strided views in bf16, on the direct path and on the forced staged fallback, within the
// scratch scratch_bytes() plans, with the bf16 copy of x counted.
TEST(Linear, Bf16StridedAndStagedWithinPlannedScratch) {
  SKIP_WITHOUT_BF16();
  const Case c{600, 20, 24};
  Weights p(c.c_in, c.c_out);
  const std::vector<float> wr = bf16_rounded(p.w.data);
  for (bool staged : {false, true}) {
    detail::force_linear_staging(staged);
    const Linear linear(p.w.view, p.b.view, 1, DType::bf16);
    detail::force_linear_staging(false);
    const StridedViews v(c.rows, 48);
    const Tensor &x = v.x, &y = v.y, &g = v.g;
    Buffer xr(Shape{c.rows, 50});
    const auto rounded = bf16_rounded(v.xs.data);
    std::copy(rounded.begin(), rounded.end(), xr.data.begin());
    for (bool accumulate : {false, true}) {
      for (bool gate : {false, true}) {
        const auto y0 = gather(y);
        const LinearEpilogue e{gate ? Activation::sigmoid : Activation::none, gate ? g : Tensor(),
                               accumulate};
        const std::size_t need = linear.scratch_bytes(c.rows, e.kind());
        EXPECT_GE(need, static_cast<std::size_t>(256 * c.c_in) * 2) << "bf16 copy of x";
        Arena exact("exact", dram_tier(), need);
        linear.forward(x, y, exact, e);
        const std::string what = std::string(staged ? "staged" : "direct") + (gate ? " gate" : "") +
                                 (accumulate ? " accumulate" : "");
        expect_close(gather(y),
                     reference_linear(xr.view.slice(1, 10, 30), wr, &p.b.data, c.c_out, e, y0),
                     kF32Matmul, what);
        EXPECT_LE(exact.high_water(), need) << what;
      }
    }
    v.expect_outside_y_untouched();
  }
}

// A bf16 Linear over many row counts: right for each, at most kMaxPlans plans kept.
TEST(Linear, Bf16PlanCacheStaysBounded) {
  SKIP_WITHOUT_BF16();
  Arena arena = test_arena();
  Weights p(16, 24);
  const Linear linear(p.w.view, p.b.view, 1, DType::bf16);
  const std::vector<float> wr = bf16_rounded(p.w.data);
  for (std::int64_t rows = 1; rows <= 20; ++rows) {
    Buffer x(Shape{rows, 16}), y(Shape{rows, 24});
    fill_normal(x.data, static_cast<std::uint32_t>(200 + rows));
    Buffer xr(Shape{rows, 16});
    const auto rounded = bf16_rounded(x.data);
    std::copy(rounded.begin(), rounded.end(), xr.data.begin());
    linear.forward(x.view, y.view, arena);
    expect_close(y.data, reference_linear(xr.view, wr, &p.b.data, 24, {}, {}), kF32Matmul,
                 "bf16 rows " + std::to_string(rows));
    ASSERT_LE(linear.plan_count(), Linear::kMaxPlans);
  }
}

// Where oneDNN has no bf16 matmul (e.g. ONEDNN_MAX_CPU_ISA=AVX2), asking for one is an
// InputError a user can act on, not a crash; elsewhere it builds.
TEST(Linear, Bf16ComputeRefusedOnlyWithoutOneDnnSupport) {
  Weights p(8, 4);
  if (bf16_support().available) {
    EXPECT_NO_THROW(Linear(p.w.view, p.b.view, 1, DType::bf16));
  } else {
    EXPECT_THROW(Linear(p.w.view, p.b.view, 1, DType::bf16), InputError);
  }
  EXPECT_THROW(Linear(p.w.view, p.b.view, 1, DType::i32), InternalError);
}

TEST(Linear, RejectsBadArguments) {
  Arena arena = test_arena();
  Weights p(8, 4);
  EXPECT_THROW(Linear(p.w.view, p.w.view), WeightsError);     // bias of the wrong size
  EXPECT_THROW(Linear(p.w.view, Tensor(), 2), WeightsError);  // no output axes left
  const Linear linear(p.w.view, p.b.view);
  Buffer x(Shape{3, 9}), y(Shape{3, 4}), y2(Shape{2, 4});
  EXPECT_THROW(linear.forward(x.view, y.view, arena), InternalError);
  Buffer x8(Shape{3, 8});
  EXPECT_THROW(linear.forward(x8.view, y2.view, arena), InternalError);
  EXPECT_THROW(linear.forward(x8.view, y.view, arena, {Activation::none, y2.view, false}),
               InternalError);
  Buffer empty_x(Shape{0, 8}), empty_y(Shape{0, 4});
  EXPECT_NO_THROW(linear.forward(empty_x.view, empty_y.view, arena));
}

}  // namespace
}  // namespace cpufold::testing
