#include "pipeline/templates/template_featurizer.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <tuple>
#include <variant>

#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/search/external_program.h"
#include "pipeline/templates/kalign_realign.h"
#include "pipeline/templates/query_hit_mapping.h"
#include "pipeline/templates/template_structure.h"
#include "structure/residue_constants.h"

namespace cpufold {
namespace fs = std::filesystem;

namespace {

constexpr int kOneHot = 22;  // HHblits ids: 20 amino acids, X, gap

struct OneTemplate {
  std::string sequence;          // [n_res] the template residue per query residue, '-' none
  std::vector<float> positions;  // [n_res, 37, 3]
  std::vector<float> mask;       // [n_res, 37]
  std::string name;
  float sum_probs = 0;  // AF2: 0 for hits without one (hmmsearch)
};

// AF2 templates.py _get_pdb_id_and_chain: "1abc_A" (custom templates: any lowercase stem).
std::pair<std::string, std::string> id_and_chain(const std::string& name) {
  static const std::regex pattern(R"(([A-Za-z0-9]+)_([A-Za-z0-9.]+).*)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) {
    throw InputError("template hit '" + name + "' is not named PDBID_CHAIN");
  }
  std::string id = m[1].str();
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return {id, m[2].str()};
}

std::string without_gaps(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '-') out.push_back(c);
  }
  return out;
}

// AF2 templates.py _find_template_in_pdb: the chain and the offset of the hit's sequence in
// its SEQRES: same chain id, else any chain, else any chain with X as a wildcard.
std::optional<std::pair<std::string, int>> find_in_structure(const TemplateStructure& st,
                                                             const std::string& chain_id,
                                                             const std::string& sequence) {
  if (const auto it = st.chains.find(chain_id); it != st.chains.end()) {
    const std::size_t at = it->second.seqres.find(sequence);
    if (at != std::string::npos) return std::pair{chain_id, static_cast<int>(at)};
  }
  for (const auto& [id, chain] : st.chains) {
    const std::size_t at = chain.seqres.find(sequence);
    if (at != std::string::npos) return std::pair{id, static_cast<int>(at)};
  }
  for (const auto& [id, chain] : st.chains) {
    const std::string& s = chain.seqres;
    for (std::size_t at = 0; at + sequence.size() <= s.size(); ++at) {
      bool match = true;
      for (std::size_t i = 0; i < sequence.size() && match; ++i) {
        match = sequence[i] == 'X' || s[at + i] == 'X' || s[at + i] == sequence[i];
      }
      if (match) return std::pair{id, static_cast<int>(at)};
    }
  }
  return std::nullopt;
}

// One hit's template, or the reason it is skipped.
std::variant<OneTemplate, std::string> process_hit(const std::string& query, const TemplateHit& hit,
                                                   const TemplateFeaturizerSettings& s) {
  auto [id, chain_id] = id_and_chain(hit.name);
  // AF2: an obsolete entry is skipped when removed, else read from its replacement.
  if (const auto it = s.obsolete.find(id); it != s.obsolete.end()) {
    if (!it->second) return std::string("obsolete (removed from the PDB)");
    id = *it->second;
  }
  if (auto why = prefilter_hit(hit, query, s.prefilter)) return *why;
  std::map<int, int> mapping = query_to_hit_mapping(hit, query);
  std::string template_sequence = without_gaps(hit.hit_sequence);

  const fs::path path = s.mmcif_path(id);
  if (path.empty() || !fs::exists(path)) {
    throw InputError("template hit " + hit.name + ": its mmCIF file " +
                     (path.empty() ? id + ".cif" : path.string()) +
                     " is missing (the hits and the mmCIF directory must come from the same "
                     "PDB copy)");
  }
  const TemplateStructure st = read_template_structure(path, id);
  if (!release_date_passes(st.release_date, s.max_template_date)) {
    return "released " + *st.release_date + ", after the max template date " + s.max_template_date;
  }
  if (st.chains.empty()) return std::string("no protein chains in " + path.string());

  std::string chain = chain_id;
  int offset = 0;
  if (const auto found = find_in_structure(st, chain_id, template_sequence)) {
    std::tie(chain, offset) = *found;
  } else {
    // AF2: the database holds another version of the chain; realign to the mmCIF SEQRES.
    auto it = st.chains.find(chain_id);
    if (it == st.chains.end() && st.chains.size() == 1) it = st.chains.begin();
    if (it == st.chains.end()) return "chain " + chain_id + " is not a protein chain of " + id;
    try {
      mapping = realign_with_kalign(template_sequence, it->second.seqres, mapping, s.scratch);
    } catch (const InputError& e) {
      return std::string("realignment to the mmCIF sequence failed: ") + e.what();
    } catch (const ExternalProgramError& e) {  // AF2: any aligner failure skips the hit
      return std::string("realignment to the mmCIF sequence failed: ") + e.what();
    }
    chain = it->first;
    template_sequence = it->second.seqres;
    offset = 0;
  }

  std::vector<float> chain_positions, chain_mask;
  try {
    chain_atom37(st.chains.at(chain), chain_positions, chain_mask);
  } catch (const InputError& e) {
    return std::string("no usable atoms: ") + e.what();
  }
  const std::size_t n = query.size();
  OneTemplate t;
  t.name = id + "_" + chain;
  t.sum_probs = static_cast<float>(hit.sum_probs.value_or(0));
  t.sequence.assign(n, '-');
  t.positions.assign(n * kNumAtom37 * 3, 0.0f);
  t.mask.assign(n * kNumAtom37, 0.0f);
  float mask_sum = 0;
  const int chain_length = static_cast<int>(st.chains.at(chain).seqres.size());
  for (const auto& [q, v] : mapping) {
    // AF2-DEVIATION: a residue the realignment left unmatched (-1) stays empty; AF2 indexes
    // position -1, the chain's last residue.
    if (v < 0 || q < 0 || q >= static_cast<int>(n)) continue;
    const int k = v + offset;
    if (k >= chain_length || v >= static_cast<int>(template_sequence.size())) continue;
    std::copy_n(chain_positions.begin() + static_cast<std::ptrdiff_t>(k) * kNumAtom37 * 3,
                kNumAtom37 * 3,
                t.positions.begin() + static_cast<std::ptrdiff_t>(q) * kNumAtom37 * 3);
    std::copy_n(chain_mask.begin() + static_cast<std::ptrdiff_t>(k) * kNumAtom37, kNumAtom37,
                t.mask.begin() + static_cast<std::ptrdiff_t>(q) * kNumAtom37);
    for (int a = 0; a < kNumAtom37; ++a) mask_sum += chain_mask[k * kNumAtom37 + a];
    t.sequence[q] = template_sequence[v];
  }
  // AF2: alanine, the smallest residue, has 5 atoms; fewer means no structure.
  if (mask_sum < 5) return std::string("the aligned residues have no atoms in " + path.string());
  return t;
}

}  // namespace

FeaturizedTemplates featurize_templates(const std::string& query, std::vector<TemplateHit> hits,
                                        const TemplateFeaturizerSettings& settings) {
  if (!hits.empty() && hits.front().sum_probs) {
    std::stable_sort(hits.begin(), hits.end(), [](const TemplateHit& a, const TemplateHit& b) {
      return a.sum_probs.value_or(0) > b.sum_probs.value_or(0);
    });
  }
  FeaturizedTemplates out;
  std::vector<OneTemplate> kept;
  std::set<std::string> seen;
  for (const TemplateHit& hit : hits) {
    if (static_cast<int>(kept.size()) >= settings.max_hits) break;
    auto result = process_hit(query, hit, settings);
    if (auto* why = std::get_if<std::string>(&result)) {
      out.skipped.push_back(hit.name + ": " + *why);
      continue;
    }
    OneTemplate& t = std::get<OneTemplate>(result);
    if (settings.deduplicate && !seen.insert(t.sequence).second) {
      out.skipped.push_back(hit.name + ": the same template sequence as a hit kept before");
      continue;
    }
    kept.push_back(std::move(t));
  }

  const std::int64_t n = static_cast<std::int64_t>(query.size());
  RawTemplates& raw = out.raw;
  raw.n_templ = static_cast<std::int64_t>(kept.size());
  raw.n_res = n;
  for (const OneTemplate& t : kept) {
    out.names.push_back(t.name);
    raw.sum_probs.push_back(t.sum_probs);
    for (char c : t.sequence) {
      // AF2 sequence_to_onehot with HHBLITS_AA_TO_ID.
      std::array<float, kOneHot> row{};
      const int id = hhblits_id(c);
      row[static_cast<std::size_t>(id < 0 ? 20 : id)] = 1.0f;
      raw.aatype_one_hot.insert(raw.aatype_one_hot.end(), row.begin(), row.end());
    }
    raw.all_atom_positions.insert(raw.all_atom_positions.end(), t.positions.begin(),
                                  t.positions.end());
    raw.all_atom_mask.insert(raw.all_atom_mask.end(), t.mask.begin(), t.mask.end());
  }
  return out;
}

}  // namespace cpufold
