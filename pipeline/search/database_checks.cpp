#include "pipeline/search/database_checks.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "memory/error.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void corrupt(const fs::path& file, const std::string& why) {
  throw InputError(file.string() + ": " + why +
                   "; the search database is incomplete or corrupt: download or build it again");
}

void require_file(const fs::path& file, const std::string& what) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    throw InputError(file.string() + ": missing (" + what +
                     "); the search database is incomplete: download or build it again");
  }
}

// The first and the last line of a text file (the last read from its end, so a huge index
// costs two small reads).
std::vector<std::string> first_and_last_lines(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string first;
  std::getline(in, first);
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > 4096 ? size - 4096 : 0;
  in.seekg(start);
  std::string tail((std::istreambuf_iterator<char>(in)), {});
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  const std::size_t nl = tail.rfind('\n');
  const std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  return {first, last};
}

// Checks that every "KEY\tOFFSET\tLENGTH" line named lies inside a data file of `data_size`
// bytes.
void check_index_lines(const fs::path& index, std::uintmax_t data_size) {
  if (fs::file_size(index) == 0) corrupt(index, "the index is empty");
  for (const std::string& line : first_and_last_lines(index)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t offset = 0, length = 0;
    if (!std::getline(fields, key, '\t') || !(fields >> offset >> length)) {
      corrupt(index, "an index line is not 'KEY<TAB>OFFSET<TAB>LENGTH': '" + line + "'");
    }
    if (offset + length > data_size) {
      corrupt(index, "the entry '" + key + "' ends at byte " + std::to_string(offset + length) +
                         " past the end of its data file (" + std::to_string(data_size) +
                         " bytes)");
    }
  }
}

}  // namespace

void check_fasta_database(const fs::path& file) {
  require_file(file, "a FASTA database");
  std::ifstream in(file, std::ios::binary);
  char c = 0;
  while (in.get(c) && (c == '\n' || c == '\r' || c == ' ')) {
  }
  if (!in || c != '>') corrupt(file, "not a FASTA file (it does not start with '>')");
}

void check_ffindex_database(const fs::path& prefix, bool need_hhm) {
  std::vector<std::string> parts = {"a3m", "cs219"};
  if (need_hhm) parts.push_back("hhm");
  for (const std::string& part : parts) {
    const fs::path data = prefix.string() + "_" + part + ".ffdata";
    const fs::path index = prefix.string() + "_" + part + ".ffindex";
    require_file(data, "the HH-suite database's " + part + " data");
    require_file(index, "the HH-suite database's " + part + " index");
    check_index_lines(index, fs::file_size(data));
  }
}

void check_mmseqs_database(const fs::path& prefix) {
  const fs::path dbtype = prefix.string() + ".dbtype";
  const fs::path index = prefix.string() + ".index";
  require_file(dbtype, "the MMseqs2 database's type");
  require_file(index, "the MMseqs2 database's index");
  if (fs::file_size(dbtype) != 4) corrupt(dbtype, "not 4 bytes long");
  std::error_code ec;
  if (fs::is_regular_file(prefix, ec)) {
    check_index_lines(index, fs::file_size(prefix));
  } else if (!fs::is_regular_file(prefix.string() + ".0", ec)) {
    throw InputError(prefix.string() + ": missing (the MMseqs2 database's data, or " +
                     prefix.string() +
                     ".0 when split); the search database is incomplete: download or build it "
                     "again");
  }
}

}  // namespace cpufold
