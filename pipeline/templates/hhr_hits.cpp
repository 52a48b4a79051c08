#include "pipeline/templates/hhr_hits.h"

#include <regex>
#include <sstream>

#include "memory/error.h"

namespace cpufold {
namespace {

void append_indices(const std::string& aligned, int start, std::vector<int>& indices) {
  int counter = start;
  for (char c : aligned) indices.push_back(c == '-' ? -1 : counter++);
}

bool is_annotation(const std::string& line, char who) {
  const std::string p = std::string(1, who) + " ";
  return line.rfind(p + "ss_dssp", 0) == 0 || line.rfind(p + "ss_pred", 0) == 0 ||
         line.rfind(p + "Consensus", 0) == 0;
}

// AF2 parsers._parse_hhr_hit on one paragraph.
TemplateHit parse_paragraph(const std::vector<std::string>& lines, const std::string& where) {
  if (lines.size() < 3) throw InputError(where + ": a hit paragraph ends after its name");
  static const std::regex summary(
      R"(Probab=(.*)[\t ]*E-value=(.*)[\t ]*Score=(.*)[\t ]*Aligned_cols=(.*)[\t ]*Identities=(.*)%[\t ]*Similarity=(.*)[\t ]*Sum_probs=(.*)[\t ]*Template_Neff=(.*))");
  static const std::regex query_line(R"([\t ]*([0-9]*) ([A-Z-]*)[\t ]*([0-9]*) \([0-9]*\).*)");
  static const std::regex hit_line(R"([\t ]*([0-9]*) ([A-Z-]*)[\t ]*[0-9]* \([0-9]*\).*)");
  TemplateHit hit;
  try {
    hit.index = std::stoi(lines[0].substr(lines[0].find_last_of(' ') + 1));
  } catch (const std::exception&) {
    throw InputError(where + ": '" + lines[0] + "' is not 'No N'");
  }
  hit.name = lines[1].substr(1);
  if (const std::size_t space = hit.name.find(' '); space != std::string::npos) {
    hit.name = hit.name.substr(0, space);
  }
  std::smatch m;
  if (!std::regex_match(lines[2], m, summary)) {
    throw InputError(where + ": hit " + std::to_string(hit.index) +
                     " has no 'Probab=... Sum_probs=...' summary line");
  }
  hit.aligned_cols = static_cast<int>(std::stod(m[4].str()));
  hit.sum_probs = std::stod(m[7].str());

  std::size_t block = 0;
  for (std::size_t i = 3; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const bool q = line.rfind("Q ", 0) == 0 && !is_annotation(line, 'Q');
    const bool t = line.rfind("T ", 0) == 0 && !is_annotation(line, 'T');
    if (!q && !t) continue;
    const std::string rest = line.size() > 17 ? line.substr(17) : "";
    if (!std::regex_match(rest, m, q ? query_line : hit_line)) {
      throw InputError(where + ": hit " + std::to_string(hit.index) + ": cannot read '" + line +
                       "'");
    }
    const int start = (m[1].str().empty() ? 1 : std::stoi(m[1].str())) - 1;
    const std::string aligned = m[2].str();
    if (q) {
      block = aligned.size();
      hit.query += aligned;
      append_indices(aligned, start, hit.indices_query);
    } else {
      if (aligned.size() != block) {
        throw InputError(where + ": hit " + std::to_string(hit.index) +
                         ": a template line's length differs from its query line's");
      }
      hit.hit_sequence += aligned;
      append_indices(aligned, start, hit.indices_hit);
    }
  }
  return hit;
}

}  // namespace

std::vector<TemplateHit> parse_hhr_hits(std::string_view hhr, const std::string& source) {
  std::vector<std::vector<std::string>> paragraphs;
  std::istringstream in{std::string(hhr)};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("No ", 0) == 0) paragraphs.emplace_back();
    if (!paragraphs.empty()) paragraphs.back().push_back(line);
  }
  std::vector<TemplateHit> hits;
  for (const auto& p : paragraphs) hits.push_back(parse_paragraph(p, source));
  return hits;
}

}  // namespace cpufold
