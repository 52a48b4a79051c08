#include "pipeline/templates/hmmsearch_hits.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "memory/error.h"

namespace cpufold {
namespace {

// AF2 parsers._get_indices: match columns get the next residue index, gaps -1; insertions
// (lowercase) advance the index without a column.
std::vector<int> residue_indices(const std::string& aligned, int start) {
  std::vector<int> indices;
  int counter = start;
  for (char c : aligned) {
    if (c == '-') {
      indices.push_back(-1);
    } else if (std::islower(static_cast<unsigned char>(c))) {
      ++counter;
    } else {
      indices.push_back(counter++);
    }
  }
  return indices;
}

struct Row {
  std::string aligned;
  std::string description;
};

}  // namespace

std::vector<TemplateHit> parse_hmmsearch_hits(std::string_view sto, std::string_view query,
                                              const std::string& source) {
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  std::istringstream in{std::string(sto)};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream fields(line);
    if (line.rfind("#=GS", 0) == 0) {  // "#=GS NAME DE description"
      std::string tag, name, feature;
      fields >> tag >> name >> feature;
      if (feature != "DE") continue;
      std::string rest;
      std::getline(fields, rest);
      rows[name].description = rest.substr(rest.find_first_not_of(' ') == std::string::npos
                                               ? rest.size()
                                               : rest.find_first_not_of(' '));
      continue;
    }
    if (line.empty() || line[0] == '#' || line.rfind("//", 0) == 0) continue;
    std::string name, aligned;
    fields >> name >> aligned;
    if (aligned.empty()) continue;
    if (rows.find(name) == rows.end() || rows[name].aligned.empty()) {
      if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
    }
    rows[name].aligned += aligned;
  }

  const std::vector<int> indices_query = residue_indices(std::string(query), 0);
  std::vector<TemplateHit> hits;
  int index = 0;
  for (const std::string& name : order) {
    ++index;
    const Row& row = rows[name];
    if (row.description.find("mol:protein") == std::string::npos) continue;
    // "1abc_A/12-140": PDB id, chain, first and last hit residue (1-based).
    const std::size_t underscore = name.find('_'), slash = name.rfind('/');
    const std::size_t dash = slash == std::string::npos ? slash : name.find('-', slash);
    if (underscore == std::string::npos || slash == std::string::npos ||
        dash == std::string::npos || underscore == 0 || slash < underscore + 2) {
      throw InputError(source + ": hit '" + name +
                       "' is not named PDBID_CHAIN/START-END as hmmsearch names pdb_seqres hits");
    }
    int start = 0;
    try {
      start = std::stoi(name.substr(slash + 1, dash - slash - 1));
    } catch (const std::exception&) {
      throw InputError(source + ": hit '" + name + "' has no start residue after '/'");
    }
    std::string aligned;
    for (char c : row.aligned) {
      if (c != '.') aligned.push_back(c);  // '.': insert column in another row
    }
    TemplateHit hit;
    hit.index = index;
    hit.name = name.substr(0, slash);
    for (char c : aligned) {
      if (std::isupper(static_cast<unsigned char>(c))) ++hit.aligned_cols;
    }
    hit.query = std::string(query);
    hit.indices_query = indices_query;
    hit.indices_hit = residue_indices(aligned, start - 1);
    if (hit.indices_hit.size() != indices_query.size()) {
      throw InputError(source + ": hit '" + name + "' has " +
                       std::to_string(hit.indices_hit.size()) + " match columns, the query " +
                       std::to_string(indices_query.size()) +
                       " residues: the hits were not searched with this query's profile");
    }
    for (char c : aligned) hit.hit_sequence.push_back(static_cast<char>(std::toupper(c)));
    hits.push_back(std::move(hit));
  }
  return hits;
}

}  // namespace cpufold
