// `cpufold evaluate`: the model on a processed-feature HDF5 file, for parity checks.

#include <cstdio>
#include <iostream>
#include <memory>

#include "pipeline/cli/cli.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/runner/evaluate.h"

namespace cpufold {

void add_evaluate_command(CLI::App& app) {
  struct Args {
    EvaluateOptions options;
    std::int64_t recycles = -1;
    CommonOptions common;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Run the model on processed AF2 features (HDF5, group inputs/ with the recycling dimension "
      "last, as in the reference files) and write the outputs/ datasets under the reference's "
      "names. Compare with ../shared/tools/h5diff.py. Outputs holding NaN or Inf are not written "
      "(exit 5; the --trace file still is).");
  add_common_options(*cmd, args->common, Command::evaluate);
  cmd->add_option("--features", args->options.features, "processed features (.h5)")->required();
  cmd->add_option("--out", args->options.out, "output file (.h5), written atomically")
      ->required()
      ->check(output_file_option());
  cmd->add_option("--recycles", args->recycles,
                  "recycling iterations after the first pass (default: as many as the feature "
                  "file holds)")
      ->transform(integer_in(0, kMaxRecycles));
  cmd->add_option("--recycle-early-stop-tolerance", args->options.early_stop_tolerance,
                  "stop recycling once the CA-CA distance matrix changes by less than this "
                  "(RMS, Å) between iterations (default 0: off, as AF2 monomer)")
      ->transform(real_in(0, kMaxEarlyStopTolerance));
  cmd->add_option("--trace", args->options.trace,
                  "also write named intermediates (the reference's trace/ names) to this .h5")
      ->check(output_file_option());
  cmd->add_flag("--quiet", args->quiet, "no progress messages on stderr");
  cmd->callback([args] {
    if (args->recycles >= 0) args->options.recycles = args->recycles;
    if (!args->quiet) {
      args->options.progress = [](const std::string& msg) { std::cerr << msg << "\n"; };
    }
    resolve_common_options(args->common, args->options.progress);
    static_cast<SharedRunOptions&>(args->options) = args->common.run;
    args->options.params = args->common.params;
    const EvaluateReport r = evaluate(args->options);
    std::printf(
        "%s: %lld residues, %lld iteration(s), mean pLDDT %.2f%s, %.2f s, peak RSS %.1f MiB\n",
        args->options.out.c_str(), static_cast<long long>(r.n_res),
        static_cast<long long>(r.iterations), r.mean_plddt,
        r.ptm ? (", pTM " + std::to_string(*r.ptm)).c_str() : "", r.seconds,
        static_cast<double>(r.peak_rss_bytes) / (1 << 20));
  });
}

}  // namespace cpufold
