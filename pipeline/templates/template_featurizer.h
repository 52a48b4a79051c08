// Template hits to RawTemplates (AF2 templates.py TemplateHitFeaturizer._process_single_hit
// and _extract_template_features): prefilter, the hit's mmCIF chain, realignment with kalign
// where the hit's sequence is not in the chain, atom37 positions and masks per query residue.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "pipeline/features/template_features.h"
#include "pipeline/templates/hit_prefilter.h"
#include "pipeline/templates/obsolete_pdbs.h"
#include "pipeline/templates/template_hit.h"

namespace cpufold {

struct TemplateFeaturizerSettings {
  // The mmCIF file of a hit's PDB id (or custom stem): AF2 reads MMCIF_DIR/ID.cif.
  std::function<std::filesystem::path(const std::string& id)> mmcif_path;
  std::string max_template_date = "2100-01-01";  // YYYY-MM-DD; later releases are skipped
  int max_hits = 4;                              // AF2 feeds 4 templates to models 1 and 2
  bool deduplicate = true;  // AF2's hmmsearch featurizer drops a template sequence seen before
  HitPrefilter prefilter;
  ObsoletePdbs obsolete;  // pdb_mmcif/obsolete.dat: removed hits skipped, replaced ones followed
  std::filesystem::path scratch;  // kalign's files
};

struct FeaturizedTemplates {
  RawTemplates raw;                  // n_templ = the hits kept, in the order kept
  std::vector<std::string> names;    // "1abc_A" per template
  std::vector<std::string> skipped;  // "1xyz_B: why" per hit examined and not kept
};

// The first `max_hits` hits that yield a template, the hits sorted by sum_probs (highest first)
// when they have them (HHsearch), else in file order (hmmsearch). `query` is the job's
// sequence. InputError when a hit's name is not PDBID_CHAIN or its mmCIF file is missing or
// unreadable (AF2 fails there too); every other per-hit problem skips the hit with a reason.
FeaturizedTemplates featurize_templates(const std::string& query, std::vector<TemplateHit> hits,
                                        const TemplateFeaturizerSettings& settings);

}  // namespace cpufold
