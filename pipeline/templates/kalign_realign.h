// AF2 templates.py _realign_pdb_template_to_query: when the hit's sequence is not found in the
// mmCIF chain (the search database holds another version of it), the hit's sequence is aligned
// to the chain's SEQRES with kalign and the query mapping carried over.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace cpufold {

// `old_mapping`: query index -> index in `old_template`. Returns query index -> index in
// `new_template` (-1 where the realignment leaves the old residue unmatched). kalign's failures
// are thrown as run_program throws them (pipeline/search/external_program.h); InputError when
// fewer than 90% of the shorter sequence's residues are identical in the alignment (AF2's
// QueryToTemplateAlignError: the caller skips the hit). `scratch` receives kalign's files.
std::map<int, int> realign_with_kalign(const std::string& old_template,
                                       const std::string& new_template,
                                       const std::map<int, int>& old_mapping,
                                       const std::filesystem::path& scratch);

// The alignment half of the above, for tests: kalign's two aligned rows.
std::pair<std::string, std::string> kalign_pair(const std::string& a, const std::string& b,
                                                const std::filesystem::path& scratch);

}  // namespace cpufold
