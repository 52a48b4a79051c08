#include "pipeline/templates/msa_for_templates.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace cpufold {
namespace {

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos;
}

// A row of alignment data (not blank, not markup, not the end tag).
bool is_row(const std::string& line) {
  return !blank(line) && line[0] != '#' && line.rfind("//", 0) != 0;
}

std::string name_of(const std::string& row) {
  return row.substr(0, row.find(' '));
}

// AF2 parsers._keep_line.
bool keep_line(const std::string& line, const std::set<std::string>& names) {
  if (blank(line)) return true;
  const std::size_t first = line.find_first_not_of(" \t");
  if (line.compare(first, 2, "//") == 0 &&
      line.find_first_not_of(" \t", first + 2) == std::string::npos)
    return true;
  if (line.rfind("# STOCKHOLM", 0) == 0 || line.rfind("#=GC RF", 0) == 0) return true;
  if (line.rfind("#=GS", 0) == 0) {
    std::istringstream fields(line);
    std::string tag, name;
    fields >> tag >> name;
    return names.count(name) > 0;
  }
  if (line[0] == '#') return false;
  return names.count(name_of(line)) > 0;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::string filtered(const std::vector<std::string>& lines, const std::set<std::string>& names) {
  std::vector<std::string> kept;
  for (const std::string& l : lines) {
    if (keep_line(l, names)) kept.push_back(l);
  }
  return joined(kept);
}

}  // namespace

std::string truncate_stockholm(std::string_view sto, std::size_t max_sequences) {
  const std::vector<std::string> lines = lines_of(sto);
  std::set<std::string> names;
  for (const std::string& l : lines) {
    if (!is_row(l)) continue;
    names.insert(name_of(l));
    if (names.size() >= max_sequences) break;
  }
  return filtered(lines, names);
}

std::string deduplicate_stockholm(std::string_view sto) {
  const std::vector<std::string> lines = lines_of(sto);
  std::vector<std::string> order;
  std::map<std::string, std::string> rows;
  for (const std::string& l : lines) {
    if (!is_row(l)) continue;
    std::istringstream fields(l);
    std::string name, aligned;
    fields >> name >> aligned;
    if (!rows.count(name)) order.push_back(name);
    rows[name] += aligned;
  }
  if (order.empty()) return joined(lines);
  const std::string& query = rows[order[0]];
  std::set<std::string> seen, names;
  for (const std::string& name : order) {
    std::string masked;
    const std::string& row = rows[name];
    for (std::size_t c = 0; c < row.size() && c < query.size(); ++c) {
      if (query[c] != '-') masked.push_back(row[c]);
    }
    if (seen.insert(masked).second) names.insert(name);
  }
  return filtered(lines, names);
}

std::string remove_empty_columns(std::string_view sto) {
  std::vector<std::string> lines = lines_of(sto);
  std::vector<std::size_t> block;  // the rows of the current block, by line index
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("#=GC RF", 0) == 0) {
      // The block ends at its reference annotation: keep a column when any row has a
      // character other than '-' there.
      const std::size_t width = lines[i].size() - lines[i].rfind(' ') - 1;
      std::vector<bool> keep(width, false);
      for (std::size_t r : block) {
        const std::string aligned = lines[r].substr(lines[r].rfind(' ') + 1);
        for (std::size_t c = 0; c < width && c < aligned.size(); ++c) {
          if (aligned[c] != '-') keep[c] = true;
        }
      }
      block.push_back(i);
      const bool any = std::find(keep.begin(), keep.end(), true) != keep.end();
      for (std::size_t r : block) {
        if (!any) {
          lines[r].clear();
          continue;
        }
        const std::size_t space = lines[r].rfind(' ');
        const std::string aligned = lines[r].substr(space + 1);
        std::string masked;
        for (std::size_t c = 0; c < aligned.size() && c < width; ++c) {
          if (keep[c]) masked.push_back(aligned[c]);
        }
        lines[r] = lines[r].substr(0, space) + " " + masked;
      }
      block.clear();
    } else if (is_row(lines[i])) {
      block.push_back(i);
    }
  }
  return joined(lines);
}

std::string msa_for_templates(std::string_view sto, std::size_t max_sequences) {
  return remove_empty_columns(deduplicate_stockholm(truncate_stockholm(sto, max_sequences)));
}

}  // namespace cpufold
