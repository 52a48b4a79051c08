#include "io/model_config.h"

#include <regex>
#include <sstream>

#include "memory/error.h"

namespace cpufold {
namespace {

// Reads dimensions of AF2 keys (given without the common prefix) from a store.
class ShapeReader {
 public:
  explicit ShapeReader(const WeightStore& store) : store_(store) {}

  bool has(const std::string& key) const { return store_.contains(std::string(kAf2Prefix) + key); }

  std::int64_t dim(const std::string& key, int axis) const {
    const Shape& s = store_.shape_of(std::string(kAf2Prefix) + key);
    const int a = axis < 0 ? axis + s.rank() : axis;
    if (a < 0 || a >= s.rank()) {
      throw WeightsError("parameter '" + std::string(kAf2Prefix) + key + "' in " +
                         store_.path().string() + " has shape " + s.str() + ", expected axis " +
                         std::to_string(axis));
    }
    return s[a];
  }

  // [.., c_in, n_head, c_hidden] attention projection.
  AttentionDims attention(const std::string& scope) const {
    return {dim(scope + "//query_w", -2), dim(scope + "//query_w", -1)};
  }

  // Width must equal an already-known value, else the file mixes two models.
  void expect(const std::string& key, int axis, std::int64_t want, const char* what) const {
    const std::int64_t got = dim(key, axis);
    if (got != want) {
      throw WeightsError("parameter '" + std::string(kAf2Prefix) + key + "' in " +
                         store_.path().string() + " has " + what + " = " + std::to_string(got) +
                         " but other parameters say " + std::to_string(want));
    }
  }

 private:
  const WeightStore& store_;
};

}  // namespace

namespace {

// Input, recycling and extra-MSA embedders: the representations' widths.
void read_embedder_dims(const ShapeReader& r, ModelConfig& c) {
  c.msa_feat_dim = r.dim("evoformer/preprocess_msa//weights", 0);
  c.c_m = r.dim("evoformer/preprocess_msa//weights", 1);
  c.target_feat_dim = r.dim("evoformer/preprocess_1d//weights", 0);
  r.expect("evoformer/preprocess_1d//weights", 1, c.c_m, "c_m");
  c.c_z = r.dim("evoformer/left_single//weights", 1);
  c.max_relative_feature = (r.dim("evoformer/pair_activiations//weights", 0) - 1) / 2;
  c.recycle_pos_bins = r.dim("evoformer/prev_pos_linear//weights", 0);
  c.c_s = r.dim("evoformer/single_activations//weights", 1);
  c.extra_msa_feat_dim = r.dim("evoformer/extra_msa_activations//weights", 0);
  c.c_e = r.dim("evoformer/extra_msa_activations//weights", 1);
}

// The Evoformer stack (AF2 Alg. 6).
void read_evoformer_dims(const ShapeReader& r, ModelConfig& c) {
  const std::string evo = "evoformer/evoformer_iteration/";
  c.n_evoformer_blocks = r.dim(evo + "msa_transition/transition1//weights", 0);
  c.msa_row_attention = r.attention(evo + "msa_row_attention_with_pair_bias/attention");
  c.msa_column_attention = r.attention(evo + "msa_column_attention/attention");
  c.triangle_attention = r.attention(evo + "triangle_attention_starting_node/attention");
  c.c_hidden_opm = r.dim(evo + "outer_product_mean/left_projection//weights", -1);
  c.c_hidden_tri_mul = r.dim(evo + "triangle_multiplication_outgoing/left_projection//weights", -1);
  c.msa_transition_factor = r.dim(evo + "msa_transition/transition1//weights", -1) / c.c_m;
  c.pair_transition_factor = r.dim(evo + "pair_transition/transition1//weights", -1) / c.c_z;
  r.expect(evo + "pair_transition/transition1//weights", 1, c.c_z, "c_z");
}

// The extra-MSA stack (AF2 Alg. 18).
void read_extra_msa_dims(const ShapeReader& r, ModelConfig& c) {
  const std::string extra = "evoformer/extra_msa_stack/";
  c.n_extra_msa_blocks = r.dim(extra + "msa_transition/transition1//weights", 0);
  c.extra_msa_row_attention = r.attention(extra + "msa_row_attention_with_pair_bias/attention");
  c.extra_msa_global_attention = r.attention(extra + "msa_column_global_attention/attention");
  c.extra_triangle_attention = r.attention(extra + "triangle_attention_starting_node/attention");
  c.extra_c_hidden_opm = r.dim(extra + "outer_product_mean/left_projection//weights", -1);
  c.extra_c_hidden_tri_mul =
      r.dim(extra + "triangle_multiplication_outgoing/left_projection//weights", -1);
  c.extra_msa_transition_factor = r.dim(extra + "msa_transition/transition1//weights", -1) / c.c_e;
}

// The template embedding (AF2 Alg. 16-17), when the file has one.
void read_template_dims(const ShapeReader& r, ModelConfig& c) {
  const std::string templ = "evoformer/template_embedding/single_template_embedding/";
  c.templates = r.has(templ + "embedding2d//weights");
  if (c.templates) {
    const std::string stack = templ + "template_pair_stack/__layer_stack_no_state/";
    c.template_pair_feat_dim = r.dim(templ + "embedding2d//weights", 0);
    c.c_t = r.dim(templ + "embedding2d//weights", 1);
    c.template_single_feat_dim = r.dim("evoformer/template_single_embedding//weights", 0);
    c.n_template_blocks = r.dim(stack + "pair_transition/transition1//weights", 0);
    c.template_triangle_attention =
        r.attention(stack + "triangle_attention_starting_node/attention");
    c.template_c_hidden_tri_mul =
        r.dim(stack + "triangle_multiplication_outgoing/left_projection//weights", -1);
    c.template_pair_transition_factor =
        r.dim(stack + "pair_transition/transition1//weights", -1) / c.c_t;
    c.template_pointwise_attention = r.attention("evoformer/template_embedding/attention");
  }
}

// The structure module: IPA and the angle resnet (AF2 Alg. 20-22).
void read_structure_dims(const ShapeReader& r, ModelConfig& c) {
  const std::string ipa = "structure_module/fold_iteration/invariant_point_attention";
  c.n_head_ipa = r.dim(ipa + "//trainable_point_weights", 0);
  c.c_ipa = r.dim(ipa + "/q_scalar//weights", 1) / c.n_head_ipa;
  c.n_qk_points = r.dim(ipa + "/q_point_local//weights", 1) / (3 * c.n_head_ipa);
  c.n_v_points = r.dim(ipa + "/kv_point_local//weights", 1) / (3 * c.n_head_ipa) - c.n_qk_points;
  c.c_resnet =
      r.dim("structure_module/fold_iteration/rigid_sidechain/input_projection//weights", 1);
  c.n_torsions =
      r.dim("structure_module/fold_iteration/rigid_sidechain/unnormalized_angles//weights", 1) / 2;
}

// The heads; the PAE head only in _ptm files.
void read_head_dims(const ShapeReader& r, ModelConfig& c) {
  c.lddt_bins = r.dim("predicted_lddt_head/logits//weights", 1);
  c.c_lddt_hidden = r.dim("predicted_lddt_head/act_0//weights", 1);
  c.distogram_bins = r.dim("distogram_head/half_logits//weights", 1);
  c.masked_msa_classes = r.dim("masked_msa_head/logits//weights", 1);
  c.atom_types = r.dim("experimentally_resolved_head/logits//weights", 1);
  c.ptm_head = r.has("predicted_aligned_error_head/logits//weights");
  if (c.ptm_head) c.pae_bins = r.dim("predicted_aligned_error_head/logits//weights", 1);
}

}  // namespace

ModelConfig ModelConfig::from_weights(const WeightStore& store) {
  const ShapeReader r(store);
  ModelConfig c;
  read_embedder_dims(r, c);
  read_evoformer_dims(r, c);
  read_extra_msa_dims(r, c);
  read_template_dims(r, c);
  read_structure_dims(r, c);
  read_head_dims(r, c);
  c.parameter_count = store.parameter_count();
  return c;
}

std::string ModelConfig::preset_family() const {
  const std::string suffix = ptm_head ? "_ptm" : "";
  if (templates) return "model_1" + suffix + " or model_2" + suffix;
  return "model_3" + suffix + ", model_4" + suffix + " or model_5" + suffix;
}

std::string ModelConfig::preset_for_file(const std::string& file_name) const {
  static const std::regex pattern(R"(params_(model_([1-5])(_ptm)?)\.(npz|h5))");
  std::smatch m;
  if (std::regex_search(file_name, m, pattern)) {
    const bool named_templates = m[2].str() == "1" || m[2].str() == "2";
    const bool named_ptm = m[3].matched;
    if (named_templates == templates && named_ptm == ptm_head) return m[1].str();
  }
  return preset_family();
}

std::string ModelConfig::describe() const {
  auto att = [](const AttentionDims& a) {
    return std::to_string(a.n_head) + " heads x " + std::to_string(a.c_hidden);
  };
  std::ostringstream s;
  s << "preset family:        " << preset_family() << "\n"
    << "templates:            " << (templates ? "on" : "off") << "\n"
    << "pTM / PAE head:       " << (ptm_head ? "on" : "off") << "\n"
    << "widths:               c_m " << c_m << ", c_z " << c_z << ", c_s " << c_s << ", c_e " << c_e
    << ", c_t " << c_t << "\n"
    << "evoformer blocks:     " << n_evoformer_blocks << "\n"
    << "extra-MSA blocks:     " << n_extra_msa_blocks << "\n"
    << "template blocks:      " << n_template_blocks << "\n"
    << "structure layers:     " << n_structure_layers << " (shared weights)\n"
    << "MSA row attention:    " << att(msa_row_attention) << "\n"
    << "MSA column attention: " << att(msa_column_attention) << "\n"
    << "triangle attention:   " << att(triangle_attention) << "\n"
    << "outer product mean:   " << c_hidden_opm << " channels\n"
    << "triangle mult.:       " << c_hidden_tri_mul << " channels\n"
    << "transitions:          MSA x" << msa_transition_factor << ", pair x"
    << pair_transition_factor << "\n"
    << "extra-MSA attention:  row " << att(extra_msa_row_attention) << ", global "
    << att(extra_msa_global_attention) << "\n";
  if (templates) {
    s << "template stack:       triangle attention " << att(template_triangle_attention)
      << ", triangle mult. " << template_c_hidden_tri_mul << ", pointwise attention "
      << att(template_pointwise_attention) << "\n";
  }
  s << "IPA:                  " << n_head_ipa << " heads x " << c_ipa << ", " << n_qk_points
    << " query points, " << n_v_points << " value points\n"
    << "heads:                pLDDT " << lddt_bins << " bins, distogram " << distogram_bins
    << " bins" << (ptm_head ? ", PAE " + std::to_string(pae_bins) + " bins" : "") << ", masked MSA "
    << masked_msa_classes << " classes\n"
    << "parameters:           " << parameter_count << "\n";
  return s.str();
}

}  // namespace cpufold
