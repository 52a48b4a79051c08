// A tiny template database built in a test: mmCIF files written by cpufold's own structure
// writer (to_mmcif) for given sequences on deterministic coordinates, and a pdb_seqres.txt
// listing their chains.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/tier.h"
#include "pipeline/output/structure_files.h"
#include "structure/residue_constants.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {

// Ubiquitin, the first example of data/examples/proteins.fasta.
inline const std::string kUbiquitin =
    "MQIFVKTLTGKTITLEVEPSDTIENVKAKIQDKEGIPPDQQRLIFAGKQLEDGRTLSDYNIQKESTLHLVLRLRGG";

// `s` with the residues at `positions` replaced by `letter`.
inline std::string mutated(std::string s, const std::vector<int>& positions, char letter) {
  for (int p : positions) s[static_cast<std::size_t>(p)] = letter;
  return s;
}

class TemplateDatabase {
 public:
  // The atom37 coordinate cpufold writes (rounded to 3 decimals) of residue i, atom a, axis k.
  static float coordinate(int i, int a, int k) {
    const double v = k == 0   ? 3.8 * i - 40.0 + 0.123 * a
                     : k == 1 ? 5.0 * std::sin(0.7 * i) + 0.05 * a
                              : -2.5 * std::cos(0.3 * (a + i));
    return static_cast<float>(std::nearbyint(v * 1000.0) / 1000.0);
  }

  // Writes DIR/mmcif_files/ID.cif (chain A holding `sequence`, released `date`) and lists it in
  // pdb_seqres.txt as `listed` (default: the same sequence).
  void add(const std::string& id, const std::string& sequence,
           const std::string& date = "1971-01-01", const std::string& listed = "") {
    const ResidueConstants& rc = residue_constants();
    const std::int64_t n = static_cast<std::int64_t>(sequence.size());
    Arena arena("template fixture", dram_tier(), 1 << 20);
    Tensor pos = arena.allocate(DType::f32, Shape{n, kNumAtom37, 3});
    Tensor mask = arena.allocate(DType::f32, Shape{n, kNumAtom37});
    Tensor plddt = arena.allocate(DType::f32, Shape{n});
    std::vector<std::int32_t> aatype, residue_index;
    for (std::int64_t i = 0; i < n; ++i) {
      aatype.push_back(restype_index(sequence[static_cast<std::size_t>(i)]));
      residue_index.push_back(static_cast<std::int32_t>(i));
      plddt.data_as<float>()[i] = 90.0f;
      for (int a = 0; a < kNumAtom37; ++a) {
        mask.data_as<float>()[i * kNumAtom37 + a] = rc.atom37_mask[aatype.back()][a];
        for (int k = 0; k < 3; ++k) {
          pos.data_as<float>()[(i * kNumAtom37 + a) * 3 + k] =
              coordinate(static_cast<int>(i), a, k);
        }
      }
    }
    StructureOutput s;
    s.name = id;
    s.aatype = aatype;
    s.residue_index = residue_index;
    s.atom_positions = pos;
    s.atom_mask = mask;
    s.plddt = plddt;
    std::string cif = to_mmcif(s);
    const std::string placeholder = "1971-01-01";  // the date cpufold writes
    if (const std::size_t at = cif.find(placeholder); at != std::string::npos) {
      cif.replace(at, placeholder.size(), date);
    }
    std::filesystem::create_directories(mmcif_dir());
    write_file(mmcif_dir() / (id + ".cif"), cif);
    seqres_ += ">" + id + "_A mol:protein length:" + std::to_string(sequence.size()) + "  TEST " +
               id + "\n" + (listed.empty() ? sequence : listed) + "\n";
    write_file(seqres(), seqres_);
    sequences_[id] = sequence;
  }

  std::filesystem::path mmcif_dir() const { return dir_ / "pdb_mmcif" / "mmcif_files"; }
  std::filesystem::path seqres() const { return dir_ / "pdb_seqres.txt"; }
  const std::filesystem::path& path() const { return dir_.path(); }
  const std::string& sequence(const std::string& id) const { return sequences_.at(id); }

 private:
  ScratchDir dir_;
  std::string seqres_;
  std::map<std::string, std::string> sequences_;
};

}  // namespace cpufold::testing
