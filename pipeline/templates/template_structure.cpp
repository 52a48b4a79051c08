#include "pipeline/templates/template_structure.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <gemmi/cif.hpp>
#include <gemmi/mmcif.hpp>
#include <gemmi/resinfo.hpp>

#include "memory/error.h"
#include "structure/residue_constants.h"

namespace cpufold {
namespace {

// AF2 uses Biopython's SCOP 3-to-1 table; gemmi's table gives the parent of a modified
// residue in lowercase (MSE -> 'm').
char one_letter(const std::string& resname) {
  const char c = gemmi::find_tabulated_residue(gemmi::Entity::first_mon(resname)).one_letter_code;
  return std::isalpha(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : 'X';
}

std::optional<std::string> first_release_date(gemmi::cif::Block& block) {
  std::optional<std::string> first;
  for (const std::string& v : block.find_values("_pdbx_audit_revision_history.revision_date")) {
    const std::string date = gemmi::cif::as_string(v);
    if (date.size() >= 10 && (!first || date < *first)) first = date.substr(0, 10);
  }
  if (!first) {
    for (const std::string& v :
         block.find_values("_pdbx_database_status.recvd_initial_deposition_date")) {
      const std::string date = gemmi::cif::as_string(v);
      if (date.size() >= 10) first = date.substr(0, 10);
    }
  }
  return first;
}

// The atom37 positions of one residue; of alternative locations the most occupied (the first
// on ties), as Biopython selects them.
void residue_atoms(const gemmi::Residue& res, std::vector<float>& pos, std::vector<float>& mask) {
  pos.assign(kNumAtom37 * 3, 0.0f);
  mask.assign(kNumAtom37, 0.0f);
  std::vector<float> occupancy(kNumAtom37, -1.0f);
  for (const gemmi::Atom& atom : res.atoms) {
    int a = atom37_index(atom.name);
    if (a < 0 && res.name == "MSE" && atom.name == "SE") a = atom37_index("SD");
    if (a < 0 || atom.occ <= occupancy[a]) continue;
    occupancy[a] = atom.occ;
    pos[a * 3 + 0] = static_cast<float>(atom.pos.x);
    pos[a * 3 + 1] = static_cast<float>(atom.pos.y);
    pos[a * 3 + 2] = static_cast<float>(atom.pos.z);
    mask[a] = 1.0f;
  }
}

}  // namespace

TemplateStructure read_template_structure(const std::filesystem::path& path,
                                          const std::string& file_id) {
  TemplateStructure out;
  out.file_id = file_id;
  gemmi::cif::Document doc;
  gemmi::Structure st;
  try {
    doc = gemmi::cif::read_file(path.string());
    if (doc.blocks.empty()) throw std::runtime_error("no data block");
    st = gemmi::make_structure(doc);
  } catch (const std::exception& e) {
    throw InputError("template structure " + path.string() +
                     " cannot be read as mmCIF: " + e.what());
  }
  out.release_date = first_release_date(doc.blocks[0]);
  if (st.models.empty()) return out;
  for (gemmi::Chain& chain : st.models[0].chains) {
    gemmi::ResidueSpan polymer = chain.get_polymer();
    if (polymer.empty()) continue;
    const gemmi::Entity* entity = st.get_entity_of(polymer);
    if (entity == nullptr || entity->full_sequence.empty() ||
        (entity->polymer_type != gemmi::PolymerType::PeptideL &&
         entity->polymer_type != gemmi::PolymerType::PeptideD)) {
      continue;
    }
    if (out.chains.count(chain.name)) continue;  // AF2 keeps a chain id's first protein part
    TemplateChain c;
    for (const std::string& mon : entity->full_sequence) c.seqres.push_back(one_letter(mon));
    c.atom_positions.resize(c.seqres.size());
    c.atom_mask.resize(c.seqres.size());
    for (const gemmi::Residue& res : polymer) {
      if (!res.label_seq) continue;
      const int k = *res.label_seq - 1;
      if (k < 0 || k >= static_cast<int>(c.seqres.size()) || !c.atom_mask[k].empty()) continue;
      residue_atoms(res, c.atom_positions[k], c.atom_mask[k]);
      // AF2: fix arginines whose NH2 is the one closer to CD.
      if (res.name == "ARG") {
        const int cd = atom37_index("CD"), nh1 = atom37_index("NH1"), nh2 = atom37_index("NH2");
        auto& p = c.atom_positions[k];
        const auto& m = c.atom_mask[k];
        auto dist = [&](int a, int b) {
          return std::hypot(p[a * 3] - p[b * 3], p[a * 3 + 1] - p[b * 3 + 1],
                            p[a * 3 + 2] - p[b * 3 + 2]);
        };
        if (m[cd] > 0 && m[nh1] > 0 && m[nh2] > 0 && dist(nh1, cd) > dist(nh2, cd)) {
          for (int x = 0; x < 3; ++x) std::swap(p[nh1 * 3 + x], p[nh2 * 3 + x]);
        }
      }
    }
    out.chains.emplace(chain.name, std::move(c));
  }
  return out;
}

void chain_atom37(const TemplateChain& chain, std::vector<float>& positions,
                  std::vector<float>& mask, double max_ca_ca) {
  const std::size_t n = chain.seqres.size();
  positions.assign(n * kNumAtom37 * 3, 0.0f);
  mask.assign(n * kNumAtom37, 0.0f);
  const int ca = atom37_index("CA");
  const float* prev = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    if (chain.atom_mask[i].empty()) {
      prev = nullptr;
      continue;
    }
    std::copy(chain.atom_positions[i].begin(), chain.atom_positions[i].end(),
              positions.begin() + static_cast<std::ptrdiff_t>(i * kNumAtom37 * 3));
    std::copy(chain.atom_mask[i].begin(), chain.atom_mask[i].end(),
              mask.begin() + static_cast<std::ptrdiff_t>(i * kNumAtom37));
    const float* here = chain.atom_mask[i][ca] > 0 ? &chain.atom_positions[i][ca * 3] : nullptr;
    if (here != nullptr && prev != nullptr) {
      const double d = std::hypot(here[0] - prev[0], here[1] - prev[1], here[2] - prev[2]);
      if (d > max_ca_ca) {
        char message[160];
        std::snprintf(message, sizeof message,
                      "the CA atoms of SEQRES residues %zu and %zu are %.1f A apart (limit %.0f)",
                      i, i + 1, d, max_ca_ca);
        throw InputError(message);
      }
    }
    prev = here;
  }
}

}  // namespace cpufold
