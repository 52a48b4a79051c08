// Parity of the MSA-side modules (AF2 Alg. 7, 8, 9, 10, 15) with the reference's replay of
// Evoformer block 0 at recycling iteration 0: each step reads the state before it and must give
// both the residual update and the state after it, unchunked and chunked.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "evoformer/msa_column_attention.h"
#include "evoformer/msa_row_attention_with_pair_bias.h"
#include "evoformer/outer_product_mean.h"
#include "evoformer/transition.h"
#include "ops/param_scope.h"
#include "tests/evoformer/block0_step_parity.h"

namespace cpufold::testing {
namespace {

// Scratch of the modules sized by the MSA: rows x residues.
template <typename Module>
std::size_t msa_scratch(const Module& module, const StepInputs& in, std::int64_t chunk) {
  return module.scratch_bytes(in.n_seq, in.n_res, chunk);
}

const std::vector<BlockStep> kMsaSteps = {
    {"MsaRowAttention",
     "m_in",
     "m_in",
     "upd_01_msa_row_attention_with_pair_bias",
     "m_01",
     {0, 5},
     [](const ParamScope& block, const ModelConfig& cfg) {
       return step_module(
           std::make_shared<const MsaRowAttentionWithPairBias>(
               block / "msa_row_attention_with_pair_bias", cfg.c_m, cfg.c_z, cfg.msa_row_attention),
           msa_scratch<MsaRowAttentionWithPairBias>,
           [](const auto& row, const StepInputs& in, const Tensor& m, const RunContext& ctx) {
             row.forward(m, in.z_in, in.msa_mask, ctx);
           });
     }},
    {"MsaColumnAttention",
     "m_01",
     "m_01",
     "upd_02_msa_column_attention",
     "m_02",
     {0, 5},
     [](const ParamScope& block, const ModelConfig& cfg) {
       return step_module(std::make_shared<const MsaColumnAttention>(
                              block / "msa_column_attention", cfg.c_m, cfg.msa_column_attention),
                          msa_scratch<MsaColumnAttention>,
                          [](const auto& column, const StepInputs& in, const Tensor& m,
                             const RunContext& ctx) { column.forward(m, in.msa_mask, ctx); });
     }},
    // The reference runs with OpenFold's _mask_trans = False: no mask in the MSA transition.
    {"MsaTransition",
     "m_02",
     "m_02",
     "upd_03_msa_transition",
     "m_03",
     {0, 5},
     [](const ParamScope& block, const ModelConfig& cfg) {
       return step_module(
           std::make_shared<const Transition>(block / "msa_transition", cfg.c_m,
                                              cfg.msa_transition_factor),
           [](const Transition& t, const StepInputs& in, std::int64_t chunk) {
             return t.scratch_bytes(in.n_seq, in.n_res, chunk, false);
           },
           [](const Transition& t, const StepInputs&, const Tensor& m, const RunContext& ctx) {
             t.forward(m, Tensor(), ctx);
           });
     }},
    {"OuterProductMean",
     "m_03",
     "z_in",
     "upd_04_outer_product_mean",
     "z_04",
     {0, 5},
     [](const ParamScope& block, const ModelConfig& cfg) {
       return step_module(
           std::make_shared<const OuterProductMean>(block / "outer_product_mean", cfg.c_m, cfg.c_z,
                                                    cfg.c_hidden_opm),
           msa_scratch<OuterProductMean>,
           [](const auto& opm, const StepInputs& in, const Tensor& z, const RunContext& ctx) {
             opm.forward(in.input, in.msa_mask, z, ctx);
           });
     }},
    // All-ones pair mask: the masked path must give the reference's numbers too.
    {"PairTransition",
     "z_08",
     "z_08",
     "upd_09_pair_transition",
     "z_09",
     {0, 5},
     [](const ParamScope& block, const ModelConfig& cfg) {
       return step_module(
           std::make_shared<const Transition>(block / "pair_transition", cfg.c_z,
                                              cfg.pair_transition_factor),
           [](const Transition& t, const StepInputs& in, std::int64_t chunk) {
             return t.scratch_bytes(in.n_res, in.n_res, chunk, true);
           },
           [](const Transition& t, const StepInputs& in, const Tensor& z, const RunContext& ctx) {
             t.forward(z, in.pair_mask, ctx);
           });
     }},
};

class MsaModuleParity : public Block0StepParity {};

TEST_P(MsaModuleParity, Block0StepMatchesReference) {
  check_step();
}

INSTANTIATE_TEST_SUITE_P(Evoformer, MsaModuleParity, ::testing::ValuesIn(step_cases(kMsaSteps)),
                         step_case_name);

}  // namespace
}  // namespace cpufold::testing
