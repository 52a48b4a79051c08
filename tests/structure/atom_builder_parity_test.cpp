// Parity of the torsion-angles -> frames -> atoms builder (AF2 Alg. 24) and the residue-constant
// index tables with the reference: the structure module's recorded backbone frames and angles
// of every layer go in; sidechain_frames, atom14 positions and the final atom37 outputs must
// come out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5_tensor_file.h"
#include "structure/atom_builder.h"
#include "structure/residue_constants.h"
#include "structure/rigid.h"
#include "tests/support/parity.h"
#include "tests/support/reference_case_test.h"
#include "tests/support/reference_cases.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {
namespace {

double max_abs_diff(const std::vector<float>& ours, std::vector<float>::const_iterator ref) {
  double m = 0;
  for (float v : ours) m = std::max(m, std::fabs(static_cast<double>(v) - *ref++));
  return m;
}

// One structure-module call's outputs (8 layers) as recorded by the reference.
struct LayerOutputs {
  std::vector<float> frames, angles, sidechain_frames, positions;  // [8, N, ...]
};

class AtomBuilderParity : public ::testing::TestWithParam<ReferenceCase> {
 protected:
  // False when the case cannot run: skipped (full width without CPUFOLD_REFERENCE_DIR) or
  // already failed (the variable is set but a file is missing).
  bool open() {
    const std::optional<ResolvedCase> c = open_case(GetParam());
    if (!c) return false;
    ref_ = std::make_unique<Hdf5TensorReader>(c->reference);
    const Shape s = ref_->shape("inputs/aatype");  // [N, iterations]
    n_res_ = s[0];
    iterations_ = s[1];
    const std::vector<float> a = ref_->read_f32("inputs/aatype");
    aatype_.resize(static_cast<std::size_t>(n_res_));
    for (std::int64_t i = 0; i < n_res_; ++i) {
      aatype_[static_cast<std::size_t>(i)] =
          static_cast<std::int64_t>(a[static_cast<std::size_t>(i * iterations_ + iterations_ - 1)]);
    }
    return true;
  }

  Tensor aatype() { return Tensor(aatype_.data(), DType::i64, Shape{n_res_}); }

  LayerOutputs read_layers(const std::string& prefix) const {
    return {ref_->read_f32(prefix + "frames"), ref_->read_f32(prefix + "angles"),
            ref_->read_f32(prefix + "sidechain_frames"), ref_->read_f32(prefix + "positions")};
  }

  // Backbone frames of `layer` from the tensor-7 (quaternion, translation in Å).
  std::vector<Rigid> backbone(const LayerOutputs& out, std::int64_t layer) const {
    std::vector<Rigid> bb(static_cast<std::size_t>(n_res_));
    for (std::int64_t i = 0; i < n_res_; ++i) {
      bb[static_cast<std::size_t>(i)] =
          Rigid::from_tensor_7(out.frames.data() + (layer * n_res_ + i) * 7);
    }
    return bb;
  }

  // Runs the builder on `layer` and checks sidechain_frames and atom14 positions.
  void check_layer(const LayerOutputs& out, std::int64_t layer, const std::string& what,
                   std::vector<float>* atom14_out = nullptr) {
    const std::vector<Rigid> bb = backbone(out, layer);
    const Tensor angles(const_cast<float*>(out.angles.data()) + layer * n_res_ * 14, DType::f32,
                        Shape{n_res_, 7, 2});
    std::vector<Rigid> frames(static_cast<std::size_t>(n_res_ * kNumRigidGroups));
    torsion_angles_to_frames(bb, angles, aatype(), frames);

    std::vector<float> frames4x4(static_cast<std::size_t>(n_res_ * 8 * 16));
    const Tensor frames_t(frames4x4.data(), DType::f32, Shape{n_res_, 8, 4, 4});
    write_frames_4x4(frames, frames_t);
    const auto f0 = out.sidechain_frames.begin() + layer * n_res_ * 8 * 16;
    EXPECT_TRUE(matches_reference(what + " sidechain_frames", frames_t,
                                  std::vector<float>(f0, f0 + n_res_ * 8 * 16),
                                  Shape{n_res_, 8, 4, 4}, kRepresentationTolerance));
    max_frames_ = std::max(max_frames_, max_abs_diff(frames4x4, f0));

    std::vector<float> atom14(static_cast<std::size_t>(n_res_ * 14 * 3));
    const Tensor atom14_t(atom14.data(), DType::f32, Shape{n_res_, 14, 3});
    frames_to_atom14_positions(frames, aatype(), atom14_t);
    const auto p0 = out.positions.begin() + layer * n_res_ * 14 * 3;
    EXPECT_TRUE(matches_reference(what + " positions", atom14_t,
                                  std::vector<float>(p0, p0 + n_res_ * 14 * 3),
                                  Shape{n_res_, 14, 3}, kAtomPositionTolerance));
    max_atoms_ = std::max(max_atoms_, max_abs_diff(atom14, p0));
    ++checked_layers_;
    if (atom14_out) *atom14_out = std::move(atom14);
  }

  void TearDown() override {
    if (checked_layers_ > 0) {
      std::cout << "max |Δ| sidechain_frames " << max_frames_ << ", atom14 positions " << max_atoms_
                << " Å\n";
    }
  }

  std::unique_ptr<Hdf5TensorReader> ref_;
  double max_frames_ = 0, max_atoms_ = 0;
  int checked_layers_ = 0;
  std::int64_t n_res_ = 0, iterations_ = 0;
  std::vector<std::int64_t> aatype_;
};

// OpenFold reports sm/frames with the translation scaled by trans_scale_factor: each CA
// (atom14 slot 1, the backbone frame's origin) sits exactly at the frame's translation.
TEST_P(AtomBuilderParity, FrameTranslationsAreInAngstrom) {
  if (!open()) return;
  const LayerOutputs out = read_layers("outputs/sm/");
  for (std::int64_t l = 0; l < 8; ++l) {
    for (std::int64_t i = 0; i < n_res_; ++i) {
      for (int c = 0; c < 3; ++c) {
        const float t = out.frames[static_cast<std::size_t>((l * n_res_ + i) * 7 + 4 + c)];
        const float ca =
            out.positions[static_cast<std::size_t>(((l * n_res_ + i) * 14 + 1) * 3 + c)];
        ASSERT_NEAR(t, ca, 1e-4) << "layer " << l << " residue " << i;
      }
    }
  }
}

// Every layer of every recycling iteration (the trace) and of the final outputs.
TEST_P(AtomBuilderParity, SidechainFramesAndAtom14MatchEveryLayer) {
  if (!open()) return;
  const LayerOutputs final_out = read_layers("outputs/sm/");
  for (std::int64_t l = 0; l < 8; ++l)
    check_layer(final_out, l, "outputs layer " + std::to_string(l));
  for (std::int64_t k = 0; k < iterations_; ++k) {
    const std::string prefix = "trace/structure_module/call_" + std::to_string(k) + "/out/";
    if (!ref_->has(prefix + "frames")) continue;
    const LayerOutputs out = read_layers(prefix);
    for (std::int64_t l = 0; l < 8; ++l) {
      check_layer(out, l, "call " + std::to_string(k) + " layer " + std::to_string(l));
    }
  }
}

// The last layer gives final_atom14_positions, final_atom_positions and final_atom_mask.
TEST_P(AtomBuilderParity, FinalAtomsMatch) {
  if (!open()) return;
  const LayerOutputs out = read_layers("outputs/sm/");
  std::vector<float> atom14;
  check_layer(out, 7, "outputs layer 7", &atom14);
  const Tensor atom14_t(atom14.data(), DType::f32, Shape{n_res_, 14, 3});
  EXPECT_TRUE(
      matches_reference(*ref_, "outputs/final_atom14_positions", atom14_t, kAtomPositionTolerance));

  std::vector<float> atom37(static_cast<std::size_t>(n_res_ * 37 * 3));
  std::vector<float> mask37(static_cast<std::size_t>(n_res_ * 37));
  const Tensor atom37_t(atom37.data(), DType::f32, Shape{n_res_, 37, 3});
  const Tensor mask37_t(mask37.data(), DType::f32, Shape{n_res_, 37});
  atom14_to_atom37(atom14_t, aatype(), atom37_t, mask37_t);
  EXPECT_TRUE(
      matches_reference(*ref_, "outputs/final_atom_positions", atom37_t, kAtomPositionTolerance));
  EXPECT_TRUE(matches_reference(*ref_, "outputs/final_atom_mask", mask37_t, kExactTolerance));
  std::cout << "max |Δ| final_atom_positions "
            << max_abs_diff(atom37, ref_->read_f32("outputs/final_atom_positions").cbegin())
            << " Å, final_atom14_positions "
            << max_abs_diff(atom14, ref_->read_f32("outputs/final_atom14_positions").cbegin())
            << " Å\n";
}

// Our atom14/atom37 index maps and masks agree with the batch features OpenFold built
// (make_atom14_masks) for this sequence.
TEST_P(AtomBuilderParity, IndexTablesMatchBatchFeatures) {
  if (!open()) return;
  const ResidueConstants& rc = residue_constants();
  const std::vector<float> a14_to_37 = ref_->read_f32("inputs/residx_atom14_to_atom37");
  const std::vector<float> a37_to_14 = ref_->read_f32("inputs/residx_atom37_to_atom14");
  const std::vector<float> exists14 = ref_->read_f32("inputs/atom14_atom_exists");
  const std::vector<float> exists37 = ref_->read_f32("inputs/atom37_atom_exists");
  const auto last = [&](std::int64_t flat) {  // recycling dimension is last
    return static_cast<std::size_t>(flat * iterations_ + iterations_ - 1);
  };
  for (std::int64_t i = 0; i < n_res_; ++i) {
    const auto r = static_cast<std::size_t>(aatype_[static_cast<std::size_t>(i)]);
    for (std::int64_t k = 0; k < kNumAtom14; ++k) {
      EXPECT_EQ(rc.atom14_to_atom37[r][k], a14_to_37[last(i * 14 + k)]) << i << ", " << k;
      EXPECT_EQ(rc.atom14_mask[r][k], exists14[last(i * 14 + k)]) << i << ", " << k;
    }
    for (std::int64_t a = 0; a < kNumAtom37; ++a) {
      EXPECT_EQ(rc.atom37_to_atom14[r][a], a37_to_14[last(i * 37 + a)]) << i << ", " << a;
      EXPECT_EQ(rc.atom37_mask[r][a], exists37[last(i * 37 + a)]) << i << ", " << a;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, AtomBuilderParity, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
}  // namespace cpufold::testing
