// A bf16 trunk keeps its extra-MSA representation in bf16 (as AF2 does): an extra-MSA block
// (AF2 Alg. 18) reads it through LayerNorm and column gathers and adds every update into it
// rounded once. Against the same bf16-compute block on an fp32 MSA, the only difference is that
// storage rounding; the block stays within its planned scratch and chunk-invariant.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <vector>

#include "evoformer/evoformer_block.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "ops/compute_precision.h"
#include "tests/support/parity.h"
#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

std::vector<float> normal_values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  fill_normal(v, seed);
  return v;
}

// Relative RMS of (a - b) against the update b - start.
double relative_rms(const std::vector<float>& a, const std::vector<float>& b,
                    const std::vector<float>& start) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += std::pow(double{a[i]} - b[i], 2);
    norm += std::pow(double{b[i]} - start[i], 2);
  }
  return std::sqrt(diff / norm);
}

struct BlockOutputs {
  std::vector<float> m, z;
};

TEST(Bf16ExtraMsaStorage, ExtraBlockOnABf16MsaDiffersFromFp32StorageByItsRoundingOnly) {
  if (!bf16_support().available) GTEST_SKIP() << "oneDNN has no bf16 matmul on this CPU";
  const WeightStore store = WeightStore::open(tiny_params("model_1_ptm"));
  const ModelConfig cfg = ModelConfig::from_weights(store);
  const EvoformerBlock block(ParamScope(store).with_precision(DType::bf16), cfg,
                             EvoformerBlock::Kind::extra_msa, 0);
  const std::int64_t S = 37, N = 11, c_e = cfg.c_e, c_z = cfg.c_z;

  // Start values exactly representable in bf16, so both runs begin from the same MSA.
  std::vector<float> m0 = normal_values(static_cast<std::size_t>(S * N * c_e), 31);
  for (float& x : m0) x = static_cast<float>(bf16(x));
  const std::vector<float> z0 = normal_values(static_cast<std::size_t>(N * N * c_z), 32);
  std::vector<float> msa_mask(static_cast<std::size_t>(S * N), 1.f);
  for (std::size_t i = 3; i < msa_mask.size(); i += 5) msa_mask[i] = 0.f;
  std::vector<float> pair_mask(static_cast<std::size_t>(N * N), 1.f);
  const Tensor mm(msa_mask.data(), DType::f32, Shape{S, N});
  const Tensor pm(pair_mask.data(), DType::f32, Shape{N, N});

  const auto run = [&](DType m_type, std::int64_t chunk) {
    Arena arena = sized_arena(block.scratch_bytes(S, N, chunk, m_type));
    RunContext ctx;
    ctx.scratch = &arena;
    ctx.chunk = chunk;
    BlockOutputs out{m0, z0};
    std::vector<bf16> m16(m0.size());
    for (std::size_t i = 0; i < m0.size(); ++i) m16[i] = bf16(m0[i]);
    const Tensor m = m_type == DType::bf16 ? Tensor(m16.data(), DType::bf16, Shape{S, N, c_e})
                                           : Tensor(out.m.data(), DType::f32, Shape{S, N, c_e});
    block.forward(m, Tensor(out.z.data(), DType::f32, Shape{N, N, c_z}), mm, pm, ctx);
    EXPECT_EQ(arena.used(), 0u) << "scratch not released";
    if (m_type == DType::bf16) {
      for (std::size_t i = 0; i < m16.size(); ++i) out.m[i] = static_cast<float>(m16[i]);
    }
    return out;
  };

  const BlockOutputs fp32 = run(DType::f32, 0);
  const BlockOutputs narrow = run(DType::bf16, 0);
  const double dm = relative_rms(narrow.m, fp32.m, m0), dz = relative_rms(narrow.z, fp32.z, z0);
  std::cout << "[ bf16 msa ] relative RMS vs fp32 storage: msa update " << dm << ", pair update "
            << dz << "\n";
  // Each of the three MSA updates is rounded to bf16 as it is stored (2^-9 relative, about 1e-3
  // RMS against values of the update's size); the pair sees it through the outer product mean.
  EXPECT_GT(dm, 1e-4) << "the MSA was not stored in bf16";
  EXPECT_LT(dm, 2e-2) << "more than bf16 storage rounding";
  EXPECT_LT(dz, 2e-2) << "more than bf16 storage rounding";

  // Chunks change only the fp32 summation order, which bf16 storage can turn into one bf16 ulp
  // on a few elements: far below the storage rounding itself.
  for (const std::int64_t chunk : {1, 4}) {
    const BlockOutputs got = run(DType::bf16, chunk);
    EXPECT_LT(relative_rms(got.m, narrow.m, m0), dm / 4) << "chunk " << chunk;
    EXPECT_LT(relative_rms(got.z, narrow.z, z0), 1e-4) << "chunk " << chunk;
  }
}

}  // namespace
}  // namespace cpufold::testing
