// `cpufold convert-params IN.npz OUT.h5`: AF2 parameters to a memory-mappable HDF5 file.
#include <chrono>
#include <iostream>
#include <memory>

#include "io/convert_params.h"
#include "memory/error.h"
#include "pipeline/cli/cli.h"
#include "pipeline/runner/model_loader.h"

namespace cpufold {

void add_convert_params_command(CLI::App& app) {
  struct Args {
    std::string in, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "convert-params",
      "Convert AlphaFold2 .npz parameters to cpufold's HDF5 file: one contiguous dataset per key, "
      "memory-mapped read-only at load so concurrent runs share one copy in the page cache.");
  cmd->add_option("IN", args->in, "AF2 parameter file (params_model_N[_ptm].npz)")->required();
  cmd->add_option("OUT", args->out, "HDF5 file to write (replaced atomically)")->required();
  cmd->callback([args] {
    const auto start = std::chrono::steady_clock::now();
    // Deriving the config checks the file really is an AF2 model before we write anything.
    const ModelWeights weights = open_model_weights(args->in);
    if (weights.store.format() != WeightStore::Format::npz) {
      throw InputError(args->in + " is already a cpufold HDF5 file; convert-params reads .npz");
    }
    const ModelConfig& config = weights.config;
    const std::string& preset = weights.preset;
    convert_params(args->in, args->out, preset);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "wrote " << args->out << ": " << weights.store.keys().size() << " arrays, "
              << config.parameter_count << " parameters, preset " << preset << " (" << seconds
              << " s)\n";
  });
}

}  // namespace cpufold
