#include "pipeline/templates/obsolete_pdbs.h"

#include <cctype>
#include <optional>
#include <string>

#include "io/whole_file.h"

namespace cpufold {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trimmed(const std::string& s) {
  const std::size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

ObsoletePdbs parse_obsolete_pdbs(std::string_view text) {
  ObsoletePdbs out;
  std::istringstream in{std::string(text)};
  for (std::string raw; std::getline(in, raw);) {
    const std::string line = trimmed(raw);
    if (line.rfind("OBSLTE", 0) != 0) continue;
    if (line.size() > 30) {
      out[lower(line.substr(20, 4))] = lower(line.substr(29, 4));  // replaced
    } else if (line.size() == 24) {
      out[lower(line.substr(20, 4))] = std::nullopt;  // removed
    }
  }
  return out;
}

ObsoletePdbs read_obsolete_pdbs(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_whole_file(path);
  return text ? parse_obsolete_pdbs(*text) : ObsoletePdbs{};
}

}  // namespace cpufold
