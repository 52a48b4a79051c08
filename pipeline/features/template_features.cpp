#include "pipeline/features/template_features.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/features/trunk_input_buffers.h"
#include "structure/residue_constants.h"
#include "structure/torsion_angles.h"

namespace cpufold {
namespace {

constexpr std::int64_t kOneHot = 22;  // HHblits ids with X and gap

void check_size(const char* field, std::size_t got, std::int64_t want, const RawTemplates& raw) {
  if (got != static_cast<std::size_t>(want)) {
    throw InputError("raw templates: " + std::string(field) + " holds " + std::to_string(got) +
                     " values, but " + std::to_string(raw.n_templ) + " template(s) of " +
                     std::to_string(raw.n_res) + " residues need " + std::to_string(want));
  }
}

void check(const RawTemplates& raw) {
  if (raw.n_templ < 0 || raw.n_res < 0) {
    throw InputError("raw templates: negative size (" + std::to_string(raw.n_templ) +
                     " templates, " + std::to_string(raw.n_res) + " residues)");
  }
  const std::int64_t tn = raw.n_templ * raw.n_res;
  check_size("template_aatype", raw.aatype_one_hot.size(), tn * kOneHot, raw);
  check_size("template_all_atom_positions", raw.all_atom_positions.size(), tn * kNumAtom37 * 3,
             raw);
  check_size("template_all_atom_mask", raw.all_atom_mask.size(), tn * kNumAtom37, raw);
  if (!raw.sum_probs.empty())
    check_size("template_sum_probs", raw.sum_probs.size(), raw.n_templ, raw);
}

// AF2 fix_templates_aatype: argmax of the one-hot (the first maximum, as torch.argmax), mapped
// from HHblits ids to restype indices.
std::int64_t template_restype(const float* one_hot) {
  const auto hhblits = std::max_element(one_hot, one_hot + kOneHot) - one_hot;
  return kHhblitsToAf2[static_cast<std::size_t>(hhblits)];
}

}  // namespace

RawTemplates empty_templates(std::int64_t n_templ, std::int64_t n_res) {
  RawTemplates t;
  t.n_templ = n_templ;
  t.n_res = n_res;
  const auto cells = static_cast<std::size_t>(n_templ * n_res);
  t.aatype_one_hot.assign(cells * 22, 0.0f);
  t.all_atom_positions.assign(cells * 37 * 3, 0.0f);
  t.all_atom_mask.assign(cells * 37, 0.0f);
  t.sum_probs.assign(static_cast<std::size_t>(n_templ), 0.0f);
  return t;
}

std::size_t template_inputs_bytes(std::int64_t n_templ, std::int64_t n_res) {
  return template_input_buffers(n_templ, n_res).bytes();
}

void process_templates(const RawTemplates& raw, TrunkInputs& out, Arena& arena) {
  check(raw);
  if (!out.aatype.empty() && out.n_res() != raw.n_res) {
    throw InputError("raw templates have " + std::to_string(raw.n_res) +
                     " residues, the query has " + std::to_string(out.n_res()));
  }
  const std::int64_t n_templ = raw.n_templ, n_res = raw.n_res;
  template_input_buffers(n_templ, n_res).allocate_into(arena, out);

  std::int64_t* aatype = out.template_aatype.data_as<std::int64_t>();
  float* positions = out.template_all_atom_positions.data_as<float>();
  float* atom_mask = out.template_all_atom_mask.data_as<float>();
  if (n_templ * n_res > 0) {
    std::memcpy(positions, raw.all_atom_positions.data(),
                raw.all_atom_positions.size() * sizeof(float));
    std::memcpy(atom_mask, raw.all_atom_mask.data(), raw.all_atom_mask.size() * sizeof(float));
  }
  for (std::int64_t i = 0; i < n_templ * n_res; ++i)
    aatype[i] = template_restype(raw.aatype_one_hot.data() + i * kOneHot);

  // AF2 make_template_mask: every given template is present.
  float* template_mask = out.template_mask.data_as<float>();
  std::fill(template_mask, template_mask + n_templ, 1.f);

  // AF2 pseudo_beta_fn: CB, or CA for glycine (atom and mask alike).
  const int ca = atom37_index("CA"), cb = atom37_index("CB");
  const int glycine = restype_index('G');
  float* pseudo_beta = out.template_pseudo_beta.data_as<float>();
  float* pseudo_beta_mask = out.template_pseudo_beta_mask.data_as<float>();
  for (std::int64_t i = 0; i < n_templ * n_res; ++i) {
    const int a = aatype[i] == glycine ? ca : cb;
    std::memcpy(pseudo_beta + i * 3, positions + (i * kNumAtom37 + a) * 3, 3 * sizeof(float));
    pseudo_beta_mask[i] = atom_mask[i * kNumAtom37 + a];
  }

  // AF2 atom37_to_torsion_angles('template_'), one template at a time.
  for (std::int64_t k = 0; k < n_templ; ++k) {
    atom37_to_torsion_angles(
        out.template_aatype.select(0, k), out.template_all_atom_positions.select(0, k),
        out.template_all_atom_mask.select(0, k), out.template_torsion_angles_sin_cos.select(0, k),
        out.template_alt_torsion_angles_sin_cos.select(0, k),
        out.template_torsion_angles_mask.select(0, k));
  }
}

}  // namespace cpufold
