#include "pipeline/runner/params_directory.h"

#include <cstdlib>

#include "memory/error.h"

namespace cpufold {

namespace fs = std::filesystem;

std::string model_type_name(ModelType type) {
  return type == ModelType::alphafold2_ptm ? "alphafold2_ptm" : "alphafold2";
}

ModelType parse_model_type(const std::string& name) {
  if (name == "auto" || name == "alphafold2_ptm") return ModelType::alphafold2_ptm;
  if (name == "alphafold2") return ModelType::alphafold2;
  if (name.rfind("alphafold2_multimer", 0) == 0) {
    throw InputError("--model-type " + name + ": multimer not supported yet");
  }
  throw InputError("--model-type must be auto, alphafold2_ptm or alphafold2, not '" + name + "'");
}

fs::path default_data_dir() {
  if (const char* dir = std::getenv("CPUFOLD_DATA"); dir != nullptr && *dir != '\0') return dir;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache != '\0') {
    return fs::path(cache) / "colabfold";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache" / "colabfold";
  }
  return fs::current_path();
}

fs::path find_params(const fs::path& data_dir, int model_number, ModelType type) {
  const std::string stem = "params_model_" + std::to_string(model_number) +
                           (type == ModelType::alphafold2_ptm ? "_ptm" : "");
  for (const fs::path& dir : {data_dir / "params", data_dir}) {
    for (const char* ext : {".h5", ".npz"}) {
      const fs::path candidate = dir / (stem + ext);
      if (fs::is_regular_file(candidate)) return candidate;
    }
  }
  const fs::path expected = data_dir / "params" / (stem + ".npz");
  throw WeightsError(
      "missing AlphaFold2 parameters: expected " + expected.string() + " (or " + stem +
      ".h5 converted from it with `cpufold convert-params`) for model_" +
      std::to_string(model_number) + " of --model-type " + model_type_name(type) +
      ". Download https://storage.googleapis.com/alphafold/alphafold_params_2022-12-06.tar "
      "(DeepMind, CC BY 4.0), unpack it into " +
      (data_dir / "params").string() + " and pass --data " + data_dir.string() +
      " (or set CPUFOLD_DATA)");
}

}  // namespace cpufold
