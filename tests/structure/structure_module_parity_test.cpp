// The structure module (AF2 Alg. 20: IPA, transition, backbone update, angle resnet, atoms)
// against the reference's trace/structure_module/call_k/out/* for every recycling iteration,
// fed with that iteration's Evoformer outputs.
#include <gtest/gtest.h>

#include <iostream>
#include <vector>

#include "io/model_config.h"
#include "memory/tensor_copy.h"
#include "structure/structure_module.h"
#include "tests/io/params_test_helpers.h"
#include "tests/support/parity.h"
#include "tests/support/reference_case_test.h"
#include "tests/support/reference_cases.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

class StructureModuleParity : public testing::ReferenceCaseTest {
 protected:
  // Runs the module on every iteration's inputs with `chunk` IPA query rows per slice and
  // compares each output with the reference trace.
  // With `mutated` params (a weight of the angle resnet changed), the angle comparisons
  // must fail instead: the |u|-scaled bound still catches a real bug.
  void check(std::int64_t chunk, const std::filesystem::path& mutated = {}) {
    const WeightStore store = WeightStore::open(mutated.empty() ? params_path_ : mutated);
    const ModelConfig config = ModelConfig::from_weights(store);
    const StructureModule module(store, config);
    const Hdf5TensorReader ref(ref_path_);
    const Shape aatype_shape = ref.shape("inputs/aatype");  // [n_res, iterations]
    const std::int64_t n = aatype_shape[0], iterations = aatype_shape[1];
    const std::string pair_module =
        "trace/evoformer_block_" + std::to_string(config.n_evoformer_blocks - 1);
    Arena arena("test", dram_tier(), std::size_t{1} << 30);
    const Tensor aatype_all = arena.allocate(DType::i64, aatype_shape);
    const Tensor seq_mask_all = arena.allocate(DType::f32, ref.shape("inputs/seq_mask"));
    ref.read("inputs/aatype", aatype_all);
    ref.read("inputs/seq_mask", seq_mask_all);
    for (std::int64_t call = 0; call < iterations; ++call) {
      SCOPED_TRACE("call_" + std::to_string(call));
      ArenaScope scope(arena);
      const std::string k = "/call_" + std::to_string(call) + "/";
      const Tensor single = arena.allocate(DType::f32, Shape{n, config.c_s});
      const Tensor pair = arena.allocate(DType::f32, Shape{n, n, config.c_z});
      ref.read("trace/evoformer_single_linear" + k + "out", single);
      ref.read(pair_module + k + "out_1", pair);
      const Tensor aatype = arena.allocate(DType::i64, Shape{n});
      copy_tensor(aatype_all.select(1, call), aatype);
      const StructureModuleOutputs out = StructureModuleOutputs::allocate(arena, config, n);
      const std::size_t mark = arena.used();
      RunContext ctx{&arena, chunk, nullptr, static_cast<int>(call)};
      module.forward(single, pair, aatype, seq_mask_all.select(1, call), out, ctx);
      EXPECT_EQ(arena.used(), mark);
      EXPECT_LE(arena.high_water() - mark, module.scratch_bytes(n, chunk));

      const std::string base = "trace/structure_module" + k + "out/";
      if (!mutated.empty()) {
        EXPECT_FALSE(testing::normalized_angles_match_reference(
            ref, base + "angles", base + "unnormalized_angles", out.angles,
            testing::kTorsionAngleTolerance));
        EXPECT_FALSE(testing::matches_reference(ref, base + "unnormalized_angles",
                                                out.unnormalized_angles,
                                                testing::kRepresentationTolerance));
        continue;
      }
      const auto expect = [&](const std::string& name, const Tensor& ours, testing::Tolerance tol) {
        testing::expect_matches(ref, base + name, ours, tol);
      };
      expect("frames", out.frames, testing::kRepresentationTolerance);
      {
        // The translations are positions (Å): hold them to the atom tolerance as well.
        const std::vector<float> ref_frames = ref.read_f32(base + "frames");
        std::vector<float> ref_trans;
        for (std::size_t e = 0; e < ref_frames.size(); ++e) {
          if (e % 7 >= 4) ref_trans.push_back(ref_frames[e]);
        }
        const ::testing::AssertionResult r = testing::matches_reference(
            base + "frames[..., 4:7]", out.frames.slice(2, 4, 7), ref_trans,
            Shape{config.n_structure_layers, n, 3}, testing::kAtomPositionTolerance);
        EXPECT_TRUE(r);
        std::cout << "  " << r.message() << "\n";
      }
      expect("unnormalized_angles", out.unnormalized_angles, testing::kRepresentationTolerance);
      {
        const ::testing::AssertionResult r = testing::normalized_angles_match_reference(
            ref, base + "angles", base + "unnormalized_angles", out.angles,
            testing::kTorsionAngleTolerance);
        EXPECT_TRUE(r);
        std::cout << "  " << r.message() << "\n";
      }
      expect("states", out.states, testing::kRepresentationTolerance);
      expect("single", out.single, testing::kRepresentationTolerance);
      expect("sidechain_frames", out.sidechain_frames, testing::kAtomPositionTolerance);
      expect("positions", out.positions, testing::kAtomPositionTolerance);
    }
  }
};

TEST_P(StructureModuleParity, MatchesTraces) {
  check(0);
}

TEST_P(StructureModuleParity, ChunkedIpaMatchesTraces) {
  check(5);
}

// One weight of the angle resnet's last block zeroed: the angles must no longer match.
TEST_P(StructureModuleParity, MutatedAngleResnetWeightFailsTheAngleComparison) {
  if (GetParam().full_width) GTEST_SKIP() << "the tiny cases show it";
  const testing::ScratchDir dir;
  const std::filesystem::path mutated = dir / "params.npz";
  const std::string key = std::string(kAf2Prefix) +
                          "structure_module/fold_iteration/rigid_sidechain/resblock2_1//weights";
  testing::write_npz_with_values(params_path_, mutated, testing::npz_entry_index(params_path_, key),
                                 {{5, 0.f}});
  check(0, mutated);
}

INSTANTIATE_TEST_SUITE_P(Reference, StructureModuleParity,
                         ::testing::ValuesIn(testing::all_cases()),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace cpufold
