// The template pipeline on a tiny database: hmmsearch against a pdb_seqres.txt of ubiquitin
// variants whose mmCIF files cpufold wrote, then AF2's filters and features.
#include "pipeline/templates/template_featurizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>

#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/templates/hhr_hits.h"
#include "pipeline/templates/hmmsearch_hits.h"
#include "pipeline/templates/hmmsearch_templates.h"
#include "pipeline/templates/scratch_directory.h"
#include "tests/pipeline/templates/template_fixture.h"

namespace cpufold {
namespace {

using testing::kUbiquitin;
using testing::mutated;
using testing::TemplateDatabase;

const std::string kQuery = kUbiquitin;
// A homologue: two extra residues in front and four substitutions.
const std::string kHomologue = "GS" + mutated(kUbiquitin, {4, 20, 40, 60}, 'A');
// Another, released in 2030.
const std::string kRecent = mutated(kUbiquitin, {6, 26, 46, 66}, 'S');
// A third, whose pdb_seqres.txt entry has one more substitution than its mmCIF file.
const std::string kRealigned = mutated(kUbiquitin, {8, 28, 48}, 'W');
const std::string kRealignedListed = mutated(kRealigned, {30}, 'P');

struct Searched {
  TemplateDatabase db;
  std::vector<TemplateHit> hits;
  ScratchDirectory scratch{"template-test"};

  Searched() {
    db.add("1ubq", kUbiquitin);  // the query itself: a duplicate
    db.add("2hom", kHomologue);
    db.add("3dup", kHomologue);  // the same template sequence again
    db.add("4new", kRecent, "2030-06-01");
    db.add("5rea", kRealigned, "1990-01-01", kRealignedListed);
    const std::string sto = hmmsearch_pdb_seqres(kQuery, std::nullopt, {db.seqres(), 1});
    hits = parse_hmmsearch_hits(sto, kQuery, "pdb_hits.sto");
  }

  TemplateFeaturizerSettings settings(const std::string& max_date) const {
    TemplateFeaturizerSettings s;
    s.mmcif_path = [dir = db.mmcif_dir()](const std::string& id) { return dir / (id + ".cif"); };
    s.max_template_date = max_date;
    s.scratch = scratch.path();
    return s;
  }
};

const Searched& searched() {
  static const Searched s;
  return s;
}

int index_of(const std::vector<std::string>& names, const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

bool skipped_for(const FeaturizedTemplates& t, const std::string& hit, const std::string& why) {
  for (const std::string& s : t.skipped) {
    if (s.rfind(hit + ":", 0) == 0 && s.find(why) != std::string::npos) return true;
  }
  return false;
}

// Template k's features at query residue q are those of residue r of the structure written for
// `sequence` (letter `letter`).
void expect_residue(const RawTemplates& raw, int k, int q, int r, char letter) {
  SCOPED_TRACE("template " + std::to_string(k) + " query residue " + std::to_string(q));
  const std::size_t n = static_cast<std::size_t>(raw.n_res);
  const float* one_hot = &raw.aatype_one_hot[(k * n + q) * 22];
  EXPECT_EQ(one_hot[hhblits_id(letter)], 1.0f);
  EXPECT_FLOAT_EQ(std::accumulate(one_hot, one_hot + 22, 0.0f), 1.0f);
  const int restype = restype_index(letter);
  for (int a = 0; a < kNumAtom37; ++a) {
    const float m = raw.all_atom_mask[(k * n + q) * kNumAtom37 + a];
    ASSERT_EQ(m, residue_constants().atom37_mask[restype][a]) << "atom " << a;
    for (int x = 0; x < 3; ++x) {
      const float expected = m > 0 ? TemplateDatabase::coordinate(r, a, x) : 0.0f;
      ASSERT_NEAR(raw.all_atom_positions[((k * n + q) * kNumAtom37 + a) * 3 + x], expected, 1e-4)
          << "atom " << a << " axis " << x;
    }
  }
}

TEST(TemplateFeaturizer, HmmsearchFindsTheVariants) {
  std::vector<std::string> names;
  for (const TemplateHit& h : searched().hits) names.push_back(h.name);
  for (const char* id : {"1ubq_A", "2hom_A", "3dup_A", "4new_A", "5rea_A"}) {
    EXPECT_GE(index_of(names, id), 0) << id << " not found";
  }
}

TEST(TemplateFeaturizer, FeaturesMatchTheStructureTheyCameFrom) {
  const Searched& s = searched();
  const FeaturizedTemplates t = featurize_templates(kQuery, s.hits, s.settings("2100-01-01"));
  ASSERT_EQ(t.raw.n_templ, 3) << ::testing::PrintToString(t.skipped);
  EXPECT_EQ(t.raw.n_res, static_cast<std::int64_t>(kQuery.size()));
  EXPECT_EQ(t.raw.sum_probs, (std::vector<float>{0, 0, 0}));  // hmmsearch has none
  const int hom = std::max(index_of(t.names, "2hom_A"), index_of(t.names, "3dup_A"));
  ASSERT_GE(hom, 0);
  int aligned = 0;
  for (int q = 0; q < static_cast<int>(kQuery.size()); ++q) {
    const float* mask = &t.raw.all_atom_mask[(hom * kQuery.size() + q) * kNumAtom37];
    if (std::accumulate(mask, mask + kNumAtom37, 0.0f) == 0) continue;
    ++aligned;
    expect_residue(t.raw, hom, q, q + 2, kHomologue[static_cast<std::size_t>(q + 2)]);
  }
  EXPECT_GE(aligned, 70);
  EXPECT_GE(index_of(t.names, "4new_A"), 0);  // 2030 is before 2100
}

TEST(TemplateFeaturizer, DuplicatesOfTheQueryAndOfEachOtherAreSkipped) {
  const Searched& s = searched();
  const FeaturizedTemplates t = featurize_templates(kQuery, s.hits, s.settings("2100-01-01"));
  EXPECT_EQ(index_of(t.names, "1ubq_A"), -1);
  EXPECT_TRUE(skipped_for(t, "1ubq_A", "duplicate of the query"))
      << ::testing::PrintToString(t.skipped);
  // One of the two identical homologues is kept, the other skipped.
  EXPECT_NE(index_of(t.names, "2hom_A") >= 0, index_of(t.names, "3dup_A") >= 0);
  EXPECT_TRUE(skipped_for(t, "2hom_A", "same template sequence") ||
              skipped_for(t, "3dup_A", "same template sequence"))
      << ::testing::PrintToString(t.skipped);
}

TEST(TemplateFeaturizer, TemplatesReleasedAfterTheMaxDateAreSkipped) {
  const Searched& s = searched();
  const FeaturizedTemplates t = featurize_templates(kQuery, s.hits, s.settings("2025-01-01"));
  EXPECT_EQ(index_of(t.names, "4new_A"), -1);
  EXPECT_TRUE(skipped_for(t, "4new_A", "released 2030-06-01"))
      << ::testing::PrintToString(t.skipped);
  EXPECT_EQ(t.raw.n_templ, 2);
}

TEST(TemplateFeaturizer, AHitOfAnotherSequenceVersionIsRealignedWithKalign) {
  const Searched& s = searched();
  const FeaturizedTemplates t = featurize_templates(kQuery, s.hits, s.settings("2100-01-01"));
  const int k = index_of(t.names, "5rea_A");
  ASSERT_GE(k, 0) << ::testing::PrintToString(t.skipped);
  // Residue 30 is P in pdb_seqres.txt but the mmCIF file's letter is what the template holds.
  ASSERT_EQ(kRealigned[30], 'Q');
  expect_residue(t.raw, k, 30, 30, 'Q');
  expect_residue(t.raw, k, 8, 8, 'W');
}

TEST(TemplateFeaturizer, KeepsAtMostMaxHits) {
  const Searched& s = searched();
  TemplateFeaturizerSettings settings = s.settings("2100-01-01");
  settings.max_hits = 1;
  const FeaturizedTemplates t = featurize_templates(kQuery, s.hits, settings);
  EXPECT_EQ(t.raw.n_templ, 1);
  EXPECT_EQ(t.raw.aatype_one_hot.size(), kQuery.size() * 22);
  EXPECT_EQ(t.raw.all_atom_positions.size(), kQuery.size() * kNumAtom37 * 3);
}

TEST(TemplateFeaturizer, AMissingMmcifFileIsAnError) {
  const Searched& s = searched();
  TemplateFeaturizerSettings settings = s.settings("2100-01-01");
  settings.mmcif_path = [](const std::string& id) {
    return std::filesystem::path("/nonexistent") / (id + ".cif");
  };
  const std::string message =
      testing::thrown_message<InputError>([&] { featurize_templates(kQuery, s.hits, settings); });
  EXPECT_NE(message.find("/nonexistent/"), std::string::npos) << message;
}

TEST(TemplateFeaturizer, AProfileFromAnAlignmentFindsTheSameHits) {
  // A jackhmmer-like uniref90 alignment: the query, a homologue with an insertion, the RF line.
  const std::string q = kQuery;
  const std::string insert_cols = "..";
  std::string sto = "# STOCKHOLM 1.0\n\nquery " + q.substr(0, 30) + insert_cols + q.substr(30) +
                    "\nhomolog " + kHomologue.substr(2, 30) + "gg" + kHomologue.substr(32) +
                    "\n#=GC RF " + std::string(30, 'x') + insert_cols + std::string(46, 'x') +
                    "\n//\n";
  const Searched& s = searched();
  const std::string out = hmmsearch_pdb_seqres(kQuery, sto, {s.db.seqres(), 1});
  const auto hits = parse_hmmsearch_hits(out, kQuery, "pdb_hits.sto");
  std::vector<std::string> names;
  for (const TemplateHit& h : hits) names.push_back(h.name);
  EXPECT_GE(index_of(names, "2hom_A"), 0) << ::testing::PrintToString(names);
  EXPECT_GE(index_of(names, "5rea_A"), 0) << ::testing::PrintToString(names);
}

// HHsearch hits (.hhr against pdb70) are taken by Sum_probs and not deduplicated, as AF2 does.
TEST(TemplateFeaturizer, HhsearchHitsAreTakenBySumProbs) {
  const Searched& s = searched();
  auto paragraph = [](int no, const std::string& name, double sum_probs) {
    char summary[200];
    std::snprintf(summary, sizeof summary,
                  "Probab=99.90  E-value=1e-30  Score=200.00  Aligned_cols=76  Identities=95%%  "
                  "Similarity=1.5  Sum_probs=%.1f  Template_Neff=1.0\n",
                  sum_probs);
    std::string text = "No " + std::to_string(no) + "\n>" + name + " TEST\n" + summary + "\n";
    // The query's 76 residues on the homologue's residues 3-78, in two blocks.
    text += "Q query            1 " + kQuery.substr(0, 40) + "   40 (76)\n";
    text += "T " + name + "           3 " + kHomologue.substr(2, 40) + "   42 (78)\n\n";
    text += "Q query           41 " + kQuery.substr(40) + "   76 (76)\n";
    text += "T " + name + "          43 " + kHomologue.substr(42) + "   78 (78)\n\n";
    return text;
  };
  const std::string hhr = paragraph(1, "3dup_A", 50.0) + paragraph(2, "2hom_A", 70.0);
  const auto hits = parse_hhr_hits(hhr, "pdb_hits.hhr");
  TemplateFeaturizerSettings settings = s.settings("2100-01-01");
  settings.deduplicate = false;
  const FeaturizedTemplates t = featurize_templates(kQuery, hits, settings);
  ASSERT_EQ(t.names, (std::vector<std::string>{"2hom_A", "3dup_A"}))
      << ::testing::PrintToString(t.skipped);
  EXPECT_EQ(t.raw.sum_probs, (std::vector<float>{70.0f, 50.0f}));
  for (int q : {0, 39, 40, 75}) {
    expect_residue(t.raw, 0, q, q + 2, kHomologue[static_cast<std::size_t>(q + 2)]);
  }
}

TEST(TemplateFeaturizer, ObsoleteEntriesAreSkippedOrFollowedToTheirReplacement) {
  const Searched& s = searched();
  TemplateFeaturizerSettings settings = s.settings("2100-01-01");
  settings.obsolete = {{"2hom", std::nullopt}, {"3dup", "2hom"}};
  const FeaturizedTemplates t = featurize_templates(kQuery, s.hits, settings);
  EXPECT_TRUE(skipped_for(t, "2hom_A", "obsolete")) << ::testing::PrintToString(t.skipped);
  // 3dup's hit is read from 2hom.cif, its replacement, and named after it.
  EXPECT_EQ(index_of(t.names, "3dup_A"), -1);
  EXPECT_GE(index_of(t.names, "2hom_A"), 0) << ::testing::PrintToString(t.skipped);
}

}  // namespace
}  // namespace cpufold
