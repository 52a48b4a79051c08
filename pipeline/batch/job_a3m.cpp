#include "pipeline/batch/job_a3m.h"

#include <fstream>
#include <iterator>
#include <unordered_set>

#include "memory/error.h"

namespace cpufold {

std::string job_a3m(std::string_view query, std::span<const std::filesystem::path> files,
                    std::span<const Msa> msas) {
  if (files.empty()) return ">101\n" + std::string(query) + "\n";
  if (files.size() == 1 && files[0].extension() == ".a3m") {
    std::ifstream in(files[0], std::ios::binary);
    if (!in) throw InputError(files[0].string() + ": cannot read the MSA again");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string text;
  std::unordered_set<std::string_view> seen;
  for (const Msa& msa : msas) {
    for (std::size_t r = 0; r < msa.sequences.size(); ++r) {
      if (!seen.insert(msa.sequences[r]).second) continue;
      const std::string& description = r < msa.descriptions.size() ? msa.descriptions[r] : "";
      text += ">" + (description.empty() ? "row_" + std::to_string(r) : description) + "\n";
      text += msa.sequences[r] + "\n";
    }
  }
  return text;
}

}  // namespace cpufold
