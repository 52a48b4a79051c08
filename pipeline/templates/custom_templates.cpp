#include "pipeline/templates/custom_templates.h"

#include <algorithm>
#include <cctype>

#include "memory/error.h"
#include "pipeline/templates/template_structure.h"

namespace cpufold {
namespace fs = std::filesystem;

CustomTemplates read_custom_templates(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw InputError("--custom-template-path " + dir.string() + " is not a directory");
  }
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".cif")
      paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) {
    throw InputError("--custom-template-path " + dir.string() + " holds no .cif files");
  }
  CustomTemplates out;
  for (const fs::path& path : paths) {
    std::string id = path.stem().string();
    for (char& c : id) {
      if (!std::isalnum(static_cast<unsigned char>(c))) {
        throw InputError("custom template " + path.string() +
                         ": name the file with letters and digits only (like 1abc.cif): the "
                         "name is the template's id");
      }
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (out.files.count(id)) {
      throw InputError("custom templates " + out.files[id].string() + " and " + path.string() +
                       " have the same name");
    }
    out.files[id] = path;
    const TemplateStructure st = read_template_structure(path, id);
    for (const auto& [chain, c] : st.chains) {
      out.seqres_fasta += ">" + id + "_" + chain +
                          " mol:protein length:" + std::to_string(c.seqres.size()) + "  " +
                          path.filename().string() + "\n" + c.seqres + "\n";
    }
  }
  return out;
}

}  // namespace cpufold
