// Floating-point operations of the model's stages, counted from the configuration: 2 × the
// multiply-adds of every Linear and of the attention / outer-product / triangle products.
// Elementwise work (LayerNorm, softmax, gates, activations, geometry) is not counted; it is a
// few percent of the total at AF2 widths. The counts name their algorithm where they model one.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "io/model_config.h"

namespace cpufold {

struct ModelSizes {
  std::int64_t n_res = 0, msa_rows = 0, extra_rows = 0, templates = 0;
};

// One module of a block, named as the block announces it (RunContext::module).
struct ModuleFlops {
  std::string_view module;
  double flops = 0;
};

// The modules of one Evoformer block (AF2 Alg. 6) or extra-MSA block (Alg. 18), in the order
// they run; the block counts below are their sums.
std::vector<ModuleFlops> evoformer_block_module_flops(const ModelConfig& c, double s, double n);
std::vector<ModuleFlops> extra_msa_block_module_flops(const ModelConfig& c, double e, double n);

// One Evoformer block (AF2 Alg. 6) on `s` MSA rows (cluster rows + template rows) and n residues.
double evoformer_block_flops(const ModelConfig& c, double s, double n);
// One extra-MSA block (AF2 Alg. 18 lines 4-16 with global column attention, Alg. 19) on `e`
// extra rows and n residues.
double extra_msa_block_flops(const ModelConfig& c, double e, double n);

// Per recycling iteration and stage; heads run once per prediction.
struct StageFlops {
  double embedders = 0;  // input embedder (Alg. 3), recycling embedder (Alg. 32), relpos
  double templates = 0;  // template pair stack and pointwise attention, template rows (Alg. 2)
  double extra_msa = 0;  // extra-MSA embedder and stack (Alg. 18)
  double evoformer = 0;  // Evoformer stack (Alg. 6) and the single projection
  double structure = 0;  // structure module (Alg. 20), 8 layers with IPA (Alg. 22)
  double heads = 0;      // distogram, pLDDT, PAE, masked MSA, experimentally resolved
};

StageFlops stage_flops(const ModelConfig& c, const ModelSizes& sizes);

// The whole prediction: every stage but the heads once per iteration, the heads once.
double model_flops(const ModelConfig& c, const ModelSizes& sizes, std::int64_t iterations);

}  // namespace cpufold
