// Where `cpufold predict` finds the AlphaFold2 parameters: AF2's and ColabFold's
// `DATA/params/params_model_N[_ptm].npz` layout, or cpufold's converted `.h5` copies.
#pragma once

#include <filesystem>
#include <string>

namespace cpufold {

enum class ModelType { alphafold2_ptm, alphafold2 };

// "alphafold2_ptm" / "alphafold2" (ColabFold's names, used in output file names).
std::string model_type_name(ModelType type);
// "auto" (= alphafold2_ptm for a monomer), "alphafold2_ptm" or "alphafold2"; InputError
// otherwise.
ModelType parse_model_type(const std::string& name);

// The default of --data: $CPUFOLD_DATA when set, otherwise ColabFold's download directory
// ${XDG_CACHE_HOME:-$HOME/.cache}/colabfold, so weights colabfold_batch fetched are found.
std::filesystem::path default_data_dir();

// The parameter file of model `model_number` (1-5): DATA/params/params_model_N[_ptm].h5 or
// .npz (.h5 preferred: converted once, memory-mapped and shared between processes), or the
// same names directly in DATA. WeightsError naming the exact path expected and how to get
// the weights when neither exists.
std::filesystem::path find_params(const std::filesystem::path& data_dir, int model_number,
                                  ModelType type);

}  // namespace cpufold
