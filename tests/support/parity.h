// Parity checks against the reference implementation's outputs: the tests' shared tolerance table,
// an elementwise comparison that reports the worst element with both values, reference
// datasets held in memory and arenas sized exactly to a module's scratch estimate.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "io/hdf5_tensor_file.h"
#include "memory/arena.h"
#include "memory/tensor.h"
#include "memory/tier.h"

namespace cpufold::testing {

// Tolerances from ../shared/reference/README.md (fp32) unless said otherwise. Never loosen one to
// pass a test.
struct Tolerance {
  double atol;
  double rtol;
};
inline constexpr Tolerance kRepresentationTolerance{1e-4, 1e-4};
inline constexpr Tolerance kAtomPositionTolerance{1e-3, 0};  // Å
inline constexpr Tolerance kPlddtTolerance{1e-3, 0};
inline constexpr Tolerance kPaeTolerance{1e-3, 0};
inline constexpr Tolerance kPtmTolerance{1e-5, 0};
// Template features from raw templates (pipeline/template_features): aatype, masks and the
// copied / gathered positions are exact (kExactTolerance below); torsion (sin, cos) within
// 1e-5 (the same float operations as the reference, so in practice bit for bit).
inline constexpr Tolerance kTemplateTorsionTolerance{1e-5, 0};
// One module's results must not depend on the chunk size beyond fp32 rounding.
inline constexpr Tolerance kChunkInvarianceTolerance{1e-6, 1e-5};
// The same over a whole trunk pass: a different slice size changes GEMM blocking and so the
// summation order, and ~10 residual updates compound that to about one ulp of the largest
// pair entries (|z| ~ 10 -> 1e-6), seen as up to 4e-6 absolute on small entries.
inline constexpr Tolerance kTrunkChunkInvarianceTolerance{1e-5, 1e-5};
// Processed AF2 features from the feature pipeline: integers, one-hots, masks and cluster
// profiles are exact; deletion values (2/pi atan(d/3)) may differ from torch's vectorised
// float atan by one ulp (seen: 3e-8 at d = 3).
inline constexpr Tolerance kFeatureTolerance{1e-6, 0};
inline constexpr Tolerance kExactTolerance{0, 0};
// Normalised torsion angles (the structure module's `angles`, a = u / |u| for each unnormalised
// (sin, cos) pair u). The unnormalised u are compared with kRepresentationTolerance like any
// module output. Normalising cannot be held to a fixed bar: an error δ of u turns the unit
// vector by up to |δ| / |u|, so a short u (|u| = 0.004 is in the tiny rec3 case) amplifies
// fp32 noise 250-fold. Each pair is therefore held to the u tolerance carried through the
// normalisation, max(atol + rtol·|a_ref|, (atol + rtol·|u_ref|) / |u_ref|): for |u| >= 1 that is
// the fixed bar, for short u it grows as 1/|u|. Checked against the reference's twins
// (../shared/reference/twins, 1 vs 2 threads): its own spread uses at most 4.5% of this
// bound on any tiny or full-width case (47% of the fixed bar on full-width model_1), and a
// bug in the angle resnet still fails through u (tests/structure, MutatedAngleResnet...).
inline constexpr Tolerance kTorsionAngleTolerance = kRepresentationTolerance;

// Primitives against a double-precision re-computation in the test (the unit tests of linear,
// layer_norm, softmax, activations, attention), |ours - double| <= atol + rtol·|double|:
// - elementwise ops and row reductions (softmax, LayerNorm, activations, masked mean): a few
//   fp32 operations per element on values of order 1, so a few ulp;
inline constexpr Tolerance kF32Elementwise{1e-6, 1e-6};
// - contractions (Linear, attention): each output sums up to ~1000 fp32 products (256 inputs,
//   1000 keys in the tests) in an order oneDNN's blocking chooses; the rounding error grows
//   with the length of the sum.
inline constexpr Tolerance kF32Matmul{1e-5, 1e-5};
// Chunked vs unchunked attention: the same arithmetic per row, only sliced differently, so
// nothing beyond rounding (the attention test also requires bitwise equality). Tighter than
// kChunkInvarianceTolerance, which also covers modules whose Linear layers run with other row
// counts (oneDNN may then block a GEMM differently) and other thread counts.
inline constexpr Tolerance kF32SameMath{1e-6, 1e-6};

// Passes when |ours - ref| <= atol + rtol·|ref| everywhere; on failure the message names
// `what`, the worst index, both values, and the max and mean |Δ|.
::testing::AssertionResult matches_reference(const std::string& what, const Tensor& ours,
                                             const std::vector<float>& ref, const Shape& ref_shape,
                                             Tolerance tol);

// The bound kTorsionAngleTolerance's comment derives, for one element of a normalised angle
// whose reference unnormalised pair has norm `ref_norm`.
double normalized_angle_allowed(Tolerance tol, double ref, double ref_norm);

// Normalised (sin, cos) pairs [..., 2] against the reference's, each element held to
// normalized_angle_allowed(tol, ref, |u_ref|) with u_ref the reference's unnormalised pair.
::testing::AssertionResult normalized_angles_match_reference(
    const std::string& what, const Tensor& ours, const std::vector<float>& ref,
    const std::vector<float>& ref_unnormalized, const Shape& ref_shape, Tolerance tol);
::testing::AssertionResult normalized_angles_match_reference(const Hdf5TensorReader& file,
                                                             const std::string& name,
                                                             const std::string& unnormalized_name,
                                                             const Tensor& ours, Tolerance tol);

// Same, reading the reference dataset `name` from `file`.
::testing::AssertionResult matches_reference(const Hdf5TensorReader& file, const std::string& name,
                                             const Tensor& ours, Tolerance tol);

// EXPECTs matches_reference (at the representation tolerance unless told) and prints the max /
// mean |Δ| on success too.
void expect_matches(const Hdf5TensorReader& file, const std::string& name, const Tensor& ours,
                    Tolerance tol = kRepresentationTolerance);

// A reference dataset (or a zero-filled shape) in memory this object owns; `view` is the
// contiguous f32 tensor.
struct OwnedTensor {
  std::vector<float> data;
  Tensor view;

  OwnedTensor(const Hdf5TensorReader& file, const std::string& name);
  explicit OwnedTensor(const Shape& shape, float fill = 0.f);
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
};

// An arena of exactly `bytes` (plus one alignment unit so an empty request still works): a
// module whose scratch estimate is short throws BudgetError.
inline Arena sized_arena(std::size_t bytes) {
  return Arena("scratch", dram_tier(), bytes + Tier::kAlignment);
}

// The tiny reference files shipped in tests/data/reference/ (e.g.
// "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5"), and the full-width ones from CPUFOLD_REFERENCE_DIR
// (empty path and a FAILED test when the variable is set but the file is missing; empty path
// when unset, so the caller skips).
std::filesystem::path tiny_reference(const std::string& file);
std::filesystem::path tiny_params(const std::string& preset);  // "model_1_ptm"
std::filesystem::path full_width_reference(const std::string& file);
std::filesystem::path full_width_params(const std::string& preset);

}  // namespace cpufold::testing
