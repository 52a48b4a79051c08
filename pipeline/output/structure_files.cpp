#include "pipeline/output/structure_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include <gemmi/cifdoc.hpp>
#include <gemmi/model.hpp>
#include <gemmi/to_cif.hpp>
#include <gemmi/to_mmcif.hpp>
#include <gemmi/to_pdb.hpp>

#include "pipeline/output/output_values.h"
#include "structure/residue_constants.h"

namespace cpufold {
namespace {

constexpr const char* kSoftware = "cpufold";
constexpr const char* kVersion = CPUFOLD_VERSION;
constexpr const char* kChain = "A";   // auth_asym_id and label_asym_id
constexpr const char* kEntity = "1";  // the one polymer entity

// Values checked once and read as plain floats.
struct Checked {
  std::int64_t n_res = 0;
  std::vector<float> positions;  // [n_res, 37, 3]
  std::vector<float> mask;       // [n_res, 37]
  std::vector<float> plddt;      // [n_res]
};

Checked check(const StructureOutput& s) {
  Checked c;
  c.n_res = static_cast<std::int64_t>(s.aatype.size());
  if (c.n_res == 0) throw InternalError("structure output for " + s.name + ": no residues");
  if (s.residue_index.size() != s.aatype.size()) {
    throw InternalError("structure output for " + s.name + ": " +
                        std::to_string(s.residue_index.size()) + " residue indices for " +
                        std::to_string(c.n_res) + " residues");
  }
  for (std::int32_t a : s.aatype) {
    if (a < 0 || a >= kNumRestypesWithX) {
      throw InternalError("structure output for " + s.name + ": residue type " + std::to_string(a) +
                          " outside 0.." + std::to_string(kNumRestypesWithX - 1));
    }
  }
  c.positions = f32_values(s.atom_positions, Shape{c.n_res, kNumAtom37, 3}, "atom_positions");
  c.mask = f32_values(s.atom_mask, Shape{c.n_res, kNumAtom37}, "atom_mask");
  c.plddt = f32_values(s.plddt, Shape{c.n_res}, "plddt");
  return c;
}

std::string resname(std::int32_t aatype) {
  return std::string(residue_constants().resnames[static_cast<std::size_t>(aatype)]);
}

// pLDDT as the files carry it: two decimals, as AF2 writes the B-factor column.
double plddt_2dp(float v) {
  return std::nearbyint(static_cast<double>(v) * 100.0) / 100.0;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A CIF data block name: printable, no blanks (gemmi falls back to "model" for an empty one).
std::string block_name(const std::string& name) {
  std::string out = name;
  for (char& ch : out) {
    if (ch <= ' ' || ch > '~') ch = '_';
  }
  return out;
}

std::string title(const StructureOutput& s) {
  return "Predicted structure of " + s.name + " by " + kSoftware + " " + kVersion +
         (s.model_name.empty() ? "" : " (" + s.model_name + ")");
}

// One model, chain A, one polymer entity holding the full sequence. Residues whose atoms are
// all masked (X, for which AF2 builds no atoms) stay in the sequence but have no coordinates.
gemmi::Structure build_structure(const StructureOutput& s, const Checked& c) {
  const ResidueConstants& rc = residue_constants();
  gemmi::Structure st;
  st.name = block_name(s.name);
  st.input_format = gemmi::CoorFormat::Mmcif;
  st.info["_struct.title"] = title(s);

  gemmi::Entity entity(kEntity);
  entity.entity_type = gemmi::EntityType::Polymer;
  entity.polymer_type = gemmi::PolymerType::PeptideL;
  entity.subchains = {kChain};

  gemmi::Chain chain(kChain);
  for (std::int64_t i = 0; i < c.n_res; ++i) {
    const std::string name = resname(s.aatype[static_cast<std::size_t>(i)]);
    entity.full_sequence.push_back(name);

    gemmi::Residue res;
    res.name = name;
    res.seqid = gemmi::SeqId(s.residue_index[static_cast<std::size_t>(i)] + 1, ' ');
    res.label_seq = static_cast<int>(i + 1);
    res.subchain = kChain;
    res.entity_id = kEntity;
    res.entity_type = gemmi::EntityType::Polymer;
    res.het_flag = 'A';
    const float b_factor = static_cast<float>(plddt_2dp(c.plddt[static_cast<std::size_t>(i)]));
    for (int a = 0; a < kNumAtom37; ++a) {  // atom37 order, as AF2 writes atoms
      if (c.mask[static_cast<std::size_t>(i * kNumAtom37 + a)] <= 0.5f) continue;
      const float* xyz = &c.positions[static_cast<std::size_t>((i * kNumAtom37 + a) * 3)];
      gemmi::Atom atom;
      atom.name = std::string(rc.atom37_names[static_cast<std::size_t>(a)]);
      atom.element = gemmi::Element(atom.name.substr(0, 1));  // N, C, O, S: the first letter
      // Rounded to the PDB format's 3 decimals so both files carry the same coordinates.
      atom.pos = gemmi::Position(std::nearbyint(xyz[0] * 1000.0) / 1000.0,
                                 std::nearbyint(xyz[1] * 1000.0) / 1000.0,
                                 std::nearbyint(xyz[2] * 1000.0) / 1000.0);
      atom.occ = 1.0f;
      atom.b_iso = b_factor;
      res.atoms.push_back(std::move(atom));
    }
    if (!res.atoms.empty()) chain.residues.push_back(std::move(res));
  }

  gemmi::Model model("1");
  if (!chain.residues.empty()) model.chains.push_back(std::move(chain));
  st.models.push_back(std::move(model));
  st.entities.push_back(std::move(entity));
  return st;
}

// A loop with `tags` under `category` (e.g. "_ma_qa_metric."), filled row by row.
gemmi::cif::Loop& add_loop(gemmi::cif::Block& block, const std::string& category,
                           std::vector<std::string> tags) {
  return block.init_mmcif_loop(category, std::move(tags));
}

using gemmi::cif::quote;

// The pLDDT quality metrics of ModelCIF: their definitions, the global mean and per residue.
void add_plddt_metrics(gemmi::cif::Block& block, const StructureOutput& s, const Checked& c) {
  auto& metric =
      add_loop(block, "_ma_qa_metric.", {"id", "name", "type", "mode", "software_group_id"});
  metric.add_row({"1", "pLDDT", "pLDDT", "global", "1"});
  metric.add_row({"2", "pLDDT", "pLDDT", "local", "1"});

  double sum = 0;
  for (float v : c.plddt) sum += plddt_2dp(v);
  add_loop(block, "_ma_qa_metric_global.", {"ordinal_id", "model_id", "metric_id", "metric_value"})
      .add_row({"1", "1", "1", fixed(sum / static_cast<double>(c.n_res), 2)});

  auto& local = add_loop(block, "_ma_qa_metric_local.",
                         {"ordinal_id", "model_id", "label_asym_id", "label_seq_id",
                          "label_comp_id", "metric_id", "metric_value"});
  local.values.reserve(static_cast<std::size_t>(c.n_res) * local.tags.size());
  for (std::int64_t i = 0; i < c.n_res; ++i) {
    local.add_row({std::to_string(i + 1), "1", kChain, std::to_string(i + 1),
                   resname(s.aatype[static_cast<std::size_t>(i)]), "2",
                   fixed(plddt_2dp(c.plddt[static_cast<std::size_t>(i)]), 2)});
  }
}

// What AF2 (alphafold/common/mmcif_metadata.py) and ColabFold add around the coordinates,
// with cpufold as the software: the ModelCIF dictionary, the software, the model list and the
// pLDDT quality metrics (global and per residue).
void add_modelcif_tables(gemmi::cif::Block& block, const StructureOutput& s, const Checked& c) {
  block.set_pair("_audit_conform.dict_name", "mmcif_ma.dic");
  block.set_pair("_audit_conform.dict_version", "1.3.9");
  block.set_pair("_audit_conform.dict_location",
                 "https://raw.githubusercontent.com/ihmwg/ModelCIF/master/dist/mmcif_ma.dic");

  // AF2's mmCIF parser (which reads templates) requires a release date; ColabFold writes this
  // placeholder revision so its predictions can be used as templates.
  add_loop(block, "_pdbx_audit_revision_history.",
           {"ordinal", "data_content_type", "major_revision", "minor_revision", "revision_date"})
      .add_row({"1", quote("Structure model"), "1", "0", "1971-01-01"});

  std::vector<std::string> comps;
  for (std::int32_t a : s.aatype) comps.push_back(resname(a));
  std::sort(comps.begin(), comps.end());
  comps.erase(std::unique(comps.begin(), comps.end()), comps.end());
  auto& chem_comp = block.init_mmcif_loop("_chem_comp.", {"id", "type"});
  for (const std::string& comp : comps) {
    chem_comp.add_row({comp, quote(comp == "GLY" ? "peptide linking" : "L-peptide linking")});
  }

  add_loop(block, "_software.",
           {"pdbx_ordinal", "name", "version", "type", "description", "classification", "date"})
      .add_row({"1", kSoftware, kVersion, "package",
                quote("AlphaFold2 structure prediction on CPU"), "other", "?"});
  add_loop(block, "_ma_software_group.", {"ordinal_id", "group_id", "software_id"})
      .add_row({"1", "1", "1"});
  add_loop(block, "_ma_data.", {"id", "name", "content_type"})
      .add_row({"1", "Model", quote("model coordinates")});
  add_loop(block, "_ma_target_entity.", {"entity_id", "data_id", "origin"})
      .add_row({kEntity, "1", "."});
  add_loop(block, "_ma_target_entity_instance.", {"asym_id", "entity_id", "details"})
      .add_row({kChain, kEntity, "."});
  add_loop(block, "_ma_protocol_step.", {"ordinal_id", "protocol_id", "step_id", "method_type"})
      .add_row({"1", "1", "1", "modeling"});
  add_loop(block, "_ma_model_list.",
           {"ordinal_id", "model_id", "model_group_id", "model_name", "model_group_name", "data_id",
            "model_type"})
      .add_row({"1", "1", "1", quote(s.model_name.empty() ? "model" : s.model_name),
                quote(std::string(kSoftware) + " " + kVersion + " model"), "1",
                quote("Ab initio model")});
  add_plddt_metrics(block, s, c);
}

}  // namespace

std::string to_pdb(const StructureOutput& s) {
  const Checked c = check(s);
  gemmi::Structure st = build_structure(s, c);
  // AF2's PDB files carry no crystal record; say what the file is instead.
  st.raw_remarks = {
      "REMARK   1 PREDICTED MODEL, NOT AN EXPERIMENTAL STRUCTURE: " + std::string(kSoftware) + " " +
          kVersion,
      "REMARK   1 MODEL " + (s.model_name.empty() ? std::string("?") : s.model_name),
      "REMARK   1 B-FACTOR COLUMN: PER-RESIDUE PLDDT (0-100)",
  };
  for (std::string& line : st.raw_remarks) line = line.substr(0, 80);
  gemmi::PdbWriteOptions options;
  options.cryst1_record = false;
  std::ostringstream os;
  try {
    gemmi::write_pdb(st, os, options);
  } catch (const std::exception& e) {
    throw InternalError("writing PDB for " + s.name + ": " + e.what());
  }
  return os.str();
}

std::string to_mmcif(const StructureOutput& s) {
  const Checked c = check(s);
  const gemmi::Structure st = build_structure(s, c);
  gemmi::MmcifOutputGroups groups(false);
  groups.block_name = groups.entry = groups.title_keywords = true;
  groups.entity = groups.entity_poly = groups.entity_poly_seq = groups.struct_asym = true;
  groups.atom_type = groups.atoms = groups.group_pdb = true;
  std::ostringstream os;
  try {
    gemmi::cif::Document doc = gemmi::make_mmcif_document(st, groups);
    add_modelcif_tables(doc.blocks.at(0), s, c);
    gemmi::cif::write_cif_to_stream(os, doc, gemmi::cif::Style::Pdbx);
  } catch (const std::exception& e) {
    throw InternalError("writing mmCIF for " + s.name + ": " + e.what());
  }
  return os.str();
}

}  // namespace cpufold
