#include "pipeline/templates/kalign_realign.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "io/atomic_file.h"
#include "memory/error.h"
#include "pipeline/search/external_program.h"

namespace cpufold {
namespace fs = std::filesystem;

std::pair<std::string, std::string> kalign_pair(const std::string& a, const std::string& b,
                                                const fs::path& scratch) {
  // AF2 kalign.py: kalign refuses sequences shorter than 6 residues.
  for (const std::string* s : {&a, &b}) {
    if (s->size() < 6) {
      throw InputError("kalign cannot align '" + *s + "': fewer than 6 residues");
    }
  }
  const fs::path in = scratch / "kalign_input.fasta", out = scratch / "kalign_output.fasta";
  write_file_atomically(in, ">old\n" + a + "\n>new\n" + b + "\n");
  run_program({.argv = {"kalign", "-i", in.string(), "-o", out.string(), "-format", "fasta"},
               .package = "kalign",
               .working_dir = scratch,
               .stdout_file = scratch / "kalign.stdout",
               .stderr_file = scratch / "kalign.stderr",
               .environment = {}});
  std::ifstream file(out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(file, line);) {
    if (line.empty()) continue;
    if (line[0] == '>') {
      rows.emplace_back();
    } else if (!rows.empty()) {
      rows.back() += line;
    }
  }
  if (rows.size() != 2 || rows[0].size() != rows[1].size()) {
    throw InputError("kalign wrote no two-row alignment to " + out.string());
  }
  return {rows[0], rows[1]};
}

std::map<int, int> realign_with_kalign(const std::string& old_template,
                                       const std::string& new_template,
                                       const std::map<int, int>& old_mapping,
                                       const fs::path& scratch) {
  const auto [old_row, new_row] = kalign_pair(old_template, new_template, scratch);
  std::map<int, int> old_to_new;
  int old_index = -1, new_index = -1, same = 0;
  for (std::size_t c = 0; c < old_row.size(); ++c) {
    if (old_row[c] != '-') ++old_index;
    if (new_row[c] != '-') ++new_index;
    if (old_row[c] != '-' && new_row[c] != '-') {
      old_to_new[old_index] = new_index;
      if (old_row[c] == new_row[c]) ++same;
    }
  }
  const double shorter = static_cast<double>(std::min(old_template.size(), new_template.size()));
  if (same / shorter < 0.9) {
    std::ostringstream why;
    why.precision(3);
    why << "the hit's sequence is " << 100.0 * same / shorter
        << "% identical to the mmCIF chain's (AF2 requires 90%)";
    throw InputError(why.str());
  }
  std::map<int, int> mapping;
  for (const auto& [q, t] : old_mapping) {
    const auto it = old_to_new.find(t);
    mapping[q] = it == old_to_new.end() ? -1 : it->second;
  }
  return mapping;
}

}  // namespace cpufold
