#include "pipeline/output/structure_files.h"

#include <gtest/gtest.h>

#include <cmath>
#include <gemmi/cif.hpp>
#include <gemmi/mmcif.hpp>
#include <gemmi/pdb.hpp>
#include <numeric>
#include <vector>

#include "memory/arena.h"
#include "memory/tier.h"
#include "structure/residue_constants.h"

namespace cpufold {
namespace {

// All 21 residue types (X last), a gap in the numbering after residue 10, positions on a
// deterministic spiral and the atoms AF2 builds for each type.
struct Fixture {
  static constexpr std::int64_t n = kNumRestypesWithX;
  Arena arena{"structure test", dram_tier(), 1 << 20};
  std::vector<std::int32_t> aatype, residue_index;
  StructureOutput out;

  Fixture() {
    const ResidueConstants& rc = residue_constants();
    Tensor pos = arena.allocate(DType::f32, Shape{n, kNumAtom37, 3});
    Tensor mask = arena.allocate(DType::f32, Shape{n, kNumAtom37});
    Tensor plddt = arena.allocate(DType::f32, Shape{n});
    for (std::int64_t i = 0; i < n; ++i) {
      aatype.push_back(static_cast<std::int32_t>(i));
      residue_index.push_back(static_cast<std::int32_t>(i < 10 ? i : i + 5));
      plddt.data_as<float>()[i] = 30.0f + 3.337f * static_cast<float>(i);
      for (int a = 0; a < kNumAtom37; ++a) {
        mask.data_as<float>()[i * kNumAtom37 + a] = rc.atom37_mask[i][a];
        float* p = pos.data_as<float>() + (i * kNumAtom37 + a) * 3;
        p[0] = 3.8f * static_cast<float>(i) - 40.0f + 0.123f * static_cast<float>(a);
        p[1] = 5.0f * std::sin(0.7f * static_cast<float>(i)) + 0.05f * static_cast<float>(a);
        p[2] = -2.5f * std::cos(0.3f * static_cast<float>(a + i));
      }
    }
    out.name = "test job";
    out.model_name = "alphafold2_ptm_model_1_seed_000";
    out.aatype = aatype;
    out.residue_index = residue_index;
    out.atom_positions = pos;
    out.atom_mask = mask;
    out.plddt = plddt;
  }
  float position(std::int64_t i, int a, int k) const {
    return out.atom_positions.data_as<float>()[(i * kNumAtom37 + a) * 3 + k];
  }
  float plddt(std::int64_t i) const { return out.plddt.data_as<float>()[i]; }
  int atom_count(std::int64_t i) const {
    const auto& m = residue_constants().atom37_mask[i];
    return static_cast<int>(std::count_if(m, m + kNumAtom37, [](float v) { return v > 0.5f; }));
  }
};

// Residues, names, numbering, atoms, coordinates and B-factors of a structure read back.
void expect_matches(const gemmi::Structure& st, const Fixture& f, double b_tolerance) {
  ASSERT_EQ(st.models.size(), 1u);
  ASSERT_EQ(st.models[0].chains.size(), 1u);
  const gemmi::Chain& chain = st.models[0].chains[0];
  EXPECT_EQ(chain.name, "A");
  // X (UNK) has no atoms in AF2's atom37 mask, so it has no coordinates.
  ASSERT_EQ(chain.residues.size(), static_cast<std::size_t>(f.n - 1));
  const ResidueConstants& rc = residue_constants();
  for (std::int64_t i = 0; i < f.n - 1; ++i) {
    const gemmi::Residue& res = chain.residues[static_cast<std::size_t>(i)];
    SCOPED_TRACE("residue " + std::to_string(i) + " " + res.name);
    EXPECT_EQ(res.name, rc.resnames[static_cast<std::size_t>(i)]);
    EXPECT_EQ(*res.seqid.num, f.residue_index[static_cast<std::size_t>(i)] + 1);
    ASSERT_EQ(static_cast<int>(res.atoms.size()), f.atom_count(i));
    for (const gemmi::Atom& atom : res.atoms) {
      const int a = atom37_index(atom.name);
      ASSERT_GE(a, 0) << atom.name;
      EXPECT_EQ(atom.element.uname()[0], atom.name[0]);
      EXPECT_NEAR(atom.pos.x, f.position(i, a, 0), 1e-3) << atom.name;
      EXPECT_NEAR(atom.pos.y, f.position(i, a, 1), 1e-3) << atom.name;
      EXPECT_NEAR(atom.pos.z, f.position(i, a, 2), 1e-3) << atom.name;
      EXPECT_NEAR(atom.b_iso, f.plddt(i), b_tolerance) << atom.name;
      EXPECT_FLOAT_EQ(atom.occ, 1.0f);
    }
  }
}

TEST(StructureFiles, PdbReadsBackWithGemmi) {
  Fixture f;
  const std::string pdb = to_pdb(f.out);
  EXPECT_NE(pdb.find("REMARK   1 PREDICTED MODEL"), std::string::npos) << pdb.substr(0, 400);
  EXPECT_NE(pdb.find("cpufold"), std::string::npos);
  EXPECT_EQ(pdb.find("CRYST1"), std::string::npos);
  const gemmi::Structure st = gemmi::read_pdb_string(pdb, "test.pdb");
  expect_matches(st, f, 0.005 + 1e-4);  // B-factors have two decimals in PDB
  // SEQRES holds the whole sequence, UNK included.
  const gemmi::Entity* entity = st.get_entity("A");
  ASSERT_NE(entity, nullptr);
  EXPECT_EQ(entity->full_sequence.size(), static_cast<std::size_t>(f.n));
  EXPECT_EQ(entity->full_sequence.back(), "UNK");
}

TEST(StructureFiles, MmcifReadsBackWithGemmiAndHasModelCifPlddt) {
  Fixture f;
  const std::string cif = to_mmcif(f.out);
  gemmi::cif::Document doc = gemmi::cif::read_string(cif);
  ASSERT_EQ(doc.blocks.size(), 1u);
  gemmi::cif::Block& block = doc.blocks[0];
  EXPECT_EQ(block.name, "test_job");
  const gemmi::Structure st = gemmi::make_structure(doc);
  expect_matches(st, f, 0.005 + 1e-4);

  // Sequence categories cover all residues.
  EXPECT_EQ(block.find("_entity_poly.", {"entity_id", "type"}).length(), 1u);
  EXPECT_EQ(block.find("_entity_poly_seq.", {"entity_id", "num", "mon_id"}).length(),
            static_cast<std::size_t>(f.n));
  ASSERT_EQ(st.entities.size(), 1u);
  EXPECT_EQ(st.entities[0].full_sequence.size(), static_cast<std::size_t>(f.n));

  // ModelCIF pLDDT: metric 1 global, metric 2 local with one row per residue.
  auto metric = block.find("_ma_qa_metric.", {"id", "name", "mode"});
  ASSERT_EQ(metric.length(), 2u);
  EXPECT_EQ(metric[0][2], "global");
  EXPECT_EQ(metric[1][2], "local");
  auto local =
      block.find("_ma_qa_metric_local.", {"label_asym_id", "label_seq_id", "label_comp_id",
                                          "metric_id", "metric_value", "model_id", "ordinal_id"});
  ASSERT_EQ(local.length(), static_cast<std::size_t>(f.n));
  double sum = 0;
  for (std::size_t i = 0; i < local.length(); ++i) {
    const auto row = local[i];
    EXPECT_EQ(row[0], "A");
    EXPECT_EQ(row[1], std::to_string(i + 1));
    EXPECT_EQ(row[2], residue_constants().resnames[i]);
    EXPECT_EQ(row[3], "2");
    EXPECT_NEAR(std::stod(row[4]), f.plddt(static_cast<std::int64_t>(i)), 0.005 + 1e-6);
    sum += std::stod(row[4]);
  }
  auto global = block.find("_ma_qa_metric_global.", {"metric_id", "metric_value"});
  ASSERT_EQ(global.length(), 1u);
  EXPECT_NEAR(std::stod(global[0][1]), sum / static_cast<double>(f.n), 0.005 + 1e-9);
  // Companion categories AF2 writes with the metrics.
  for (const char* category :
       {"_software.", "_ma_software_group.", "_ma_model_list.", "_ma_data.", "_ma_target_entity.",
        "_audit_conform.", "_pdbx_audit_revision_history.", "_chem_comp.", "_struct_asym."}) {
    EXPECT_TRUE(block.find_mmcif_category(category).ok()) << category;
  }
  const std::string* model_name = block.find_value("_ma_model_list.model_name");
  ASSERT_NE(model_name, nullptr);
  EXPECT_EQ(gemmi::cif::as_string(*model_name), "alphafold2_ptm_model_1_seed_000");
}

TEST(StructureFiles, MismatchedShapesAreAnInternalError) {
  Fixture f;
  f.out.plddt = f.out.plddt.slice(0, 0, 5);
  EXPECT_THROW(to_pdb(f.out), InternalError);
  EXPECT_THROW(to_mmcif(f.out), InternalError);
}

}  // namespace
}  // namespace cpufold
