#include "pipeline/runner/model_flops.h"

namespace cpufold {
namespace {

double d(std::int64_t v) {
  return static_cast<double>(v);
}

// MSA row attention with pair bias (Alg. 7) on s rows of width cm: q, k, v, gate and output
// projections, q·kᵀ and weights·v, and the pair bias.
double row_attention(double s, double n, double cm, double cz, const AttentionDims& a) {
  const double h = d(a.n_head), k = d(a.c_hidden);
  return 2 * s * n * cm * 5 * h * k + 4 * s * h * n * n * k + 2 * n * n * cz * h;
}

// One triangle multiplication (Alg. 11 or 12) on an n x n pair of width cz: the edge
// projections and gates, the gating linear, the products and the output projection.
double triangle_multiplication(double n, double cz, double c_mul) {
  return 2 * n * n * cz * (4 * c_mul + cz) + 2 * n * n * n * c_mul + 2 * n * n * c_mul * cz;
}

// One triangle attention (Alg. 13 or 14): projections, q·kᵀ and weights·v, the triangle bias.
double triangle_attention(double n, double cz, const AttentionDims& att) {
  const double h = d(att.n_head), k = d(att.c_hidden);
  return 2 * n * n * cz * 5 * h * k + 4 * n * h * n * n * k + 2 * n * n * cz * h;
}

// Pair transition (Alg. 15).
double pair_transition(double n, double cz, double factor) {
  return 4 * n * n * cz * factor * cz;
}

void add_pair_stack(std::vector<ModuleFlops>& f, double n, double cz, double c_mul,
                    const AttentionDims& att, double factor) {
  f.push_back({"triangle_multiplication_outgoing", triangle_multiplication(n, cz, c_mul)});
  f.push_back({"triangle_multiplication_incoming", triangle_multiplication(n, cz, c_mul)});
  f.push_back({"triangle_attention_starting_node", triangle_attention(n, cz, att)});
  f.push_back({"triangle_attention_ending_node", triangle_attention(n, cz, att)});
  f.push_back({"pair_transition", pair_transition(n, cz, factor)});
}

double sum(const std::vector<ModuleFlops>& modules) {
  double f = 0;
  for (const ModuleFlops& m : modules) f += m.flops;
  return f;
}

// The template pair stack's blocks (Alg. 16) are the pair stack alone.
double pair_stack(double n, double cz, double c_mul, const AttentionDims& att, double factor) {
  std::vector<ModuleFlops> f;
  add_pair_stack(f, n, cz, c_mul, att, factor);
  return sum(f);
}

// Outer product mean (Alg. 10): two projections, the outer products summed over s rows and
// the output projection.
double outer_product_mean(double s, double n, double cm, double co, double cz) {
  return 4 * s * n * cm * co + 2 * n * n * co * co * s + 2 * n * n * co * co * cz;
}

}  // namespace

// Row attention, global column attention (Alg. 19: one shared key and value head, per-head
// queries from the column mean), transition, outer product mean and the pair stack.
std::vector<ModuleFlops> extra_msa_block_module_flops(const ModelConfig& c, double e, double n) {
  const double ce = d(c.c_e), cz = d(c.c_z);
  const double hg = d(c.extra_msa_global_attention.n_head),
               kg = d(c.extra_msa_global_attention.c_hidden);
  std::vector<ModuleFlops> f;
  f.push_back({"msa_row_attention", row_attention(e, n, ce, cz, c.extra_msa_row_attention)});
  f.push_back({"msa_column_global_attention", 2 * n * ce * hg * kg +
                                                  2 * e * n * ce * (2 * kg + hg * kg) +
                                                  4 * n * hg * e * kg + 2 * e * n * hg * kg * ce});
  f.push_back({"msa_transition", 4 * e * n * ce * d(c.extra_msa_transition_factor) * ce});
  f.push_back({"outer_product_mean", outer_product_mean(e, n, ce, d(c.extra_c_hidden_opm), cz)});
  add_pair_stack(f, n, cz, d(c.extra_c_hidden_tri_mul), c.extra_triangle_attention,
                 d(c.pair_transition_factor));
  return f;
}

std::vector<ModuleFlops> evoformer_block_module_flops(const ModelConfig& c, double s, double n) {
  const double cm = d(c.c_m), cz = d(c.c_z);
  const double hc = d(c.msa_column_attention.n_head), kc = d(c.msa_column_attention.c_hidden);
  std::vector<ModuleFlops> f;
  f.push_back({"msa_row_attention", row_attention(s, n, cm, cz, c.msa_row_attention)});
  f.push_back({"msa_column_attention",  // Alg. 8
               2 * s * n * cm * 5 * hc * kc + 4 * n * hc * s * s * kc});
  f.push_back({"msa_transition", 4 * s * n * cm * d(c.msa_transition_factor) * cm});  // Alg. 9
  f.push_back({"outer_product_mean", outer_product_mean(s, n, cm, d(c.c_hidden_opm), cz)});
  add_pair_stack(f, n, cz, d(c.c_hidden_tri_mul), c.triangle_attention,
                 d(c.pair_transition_factor));
  return f;
}

double extra_msa_block_flops(const ModelConfig& c, double e, double n) {
  return sum(extra_msa_block_module_flops(c, e, n));
}

double evoformer_block_flops(const ModelConfig& c, double s, double n) {
  return sum(evoformer_block_module_flops(c, s, n));
}

StageFlops stage_flops(const ModelConfig& c, const ModelSizes& z) {
  const double n = d(z.n_res), s = d(z.msa_rows), e = d(z.extra_rows);
  const double t = c.templates ? d(z.templates) : 0;
  const double cm = d(c.c_m), cz = d(c.c_z), cs = d(c.c_s), ct = d(c.c_t);
  StageFlops f;
  f.embedders = 2 * s * n * d(c.msa_feat_dim) * cm + 2 * n * d(c.target_feat_dim) * (cm + 2 * cz) +
                2 * n * n * d(2 * c.max_relative_feature + 1) * cz +
                2 * n * n * d(c.recycle_pos_bins) * cz;
  if (t > 0) {
    const double hp = d(c.template_pointwise_attention.n_head),
                 kp = d(c.template_pointwise_attention.c_hidden);
    double per_template = 2 * n * n * d(c.template_pair_feat_dim) * ct;
    per_template += d(c.n_template_blocks) * pair_stack(n, ct, d(c.template_c_hidden_tri_mul),
                                                        c.template_triangle_attention,
                                                        d(c.template_pair_transition_factor));
    per_template += 2 * n * d(c.template_single_feat_dim) * cm + 2 * n * cm * cm;  // torsion rows
    f.templates = t * per_template;
    // Pointwise attention (Alg. 17): queries from the pair, keys and values per template.
    f.templates += 2 * n * n * cz * hp * kp + 4 * t * n * n * ct * hp * kp +
                   4 * n * n * t * hp * kp + 2 * n * n * hp * kp * cz;
  }
  f.extra_msa = 2 * e * n * d(c.extra_msa_feat_dim) * d(c.c_e) +
                d(c.n_extra_msa_blocks) * extra_msa_block_flops(c, e, n);
  f.evoformer = d(c.n_evoformer_blocks) * evoformer_block_flops(c, s + t, n) + 2 * n * cm * cs;

  const double h = d(c.n_head_ipa), ci = d(c.c_ipa), pq = d(c.n_qk_points), pv = d(c.n_v_points),
               cr = d(c.c_resnet);
  double ipa = 2 * n * cs * h * (3 * ci + 3 * pq + 3 * (pq + pv));  // projections
  ipa += 2 * n * n * cz * h;                                        // pair bias
  ipa += 2 * n * n * h * (ci + 3 * pq);                             // logits
  ipa += 2 * n * n * h * (ci + 3 * pv + cz);                        // weighted values
  ipa += 2 * n * h * (ci + 4 * pv + cz) * cs;                       // output projection
  const double layer = ipa + 3 * 2 * n * cs * cs + 2 * n * cs * 6 + 2 * n * cs * cr +
                       4 * 2 * n * cr * cr + 2 * n * cr * 2 * d(c.n_torsions);
  f.structure = 2 * n * cs * cs + 2 * n * cs * cr + d(c.n_structure_layers) * layer;

  const double cl = d(c.c_lddt_hidden);
  f.heads = 2 * n * n * cz * (d(c.distogram_bins) + d(c.pae_bins)) +
            2 * s * n * cm * d(c.masked_msa_classes) +
            2 * n * (cs * cl + cl * cl + cl * d(c.lddt_bins)) + 2 * n * cs * d(c.atom_types);
  return f;
}

double model_flops(const ModelConfig& c, const ModelSizes& sizes, std::int64_t iterations) {
  const StageFlops f = stage_flops(c, sizes);
  return d(iterations) * (f.embedders + f.templates + f.extra_msa + f.evoformer + f.structure) +
         f.heads;
}

}  // namespace cpufold
