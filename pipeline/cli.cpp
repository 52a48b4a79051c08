#include "pipeline/cli.h"

#include <exception>
#include <filesystem>
#include <iostream>
#include <new>

#include "evoformer/row_kernels.h"
#include "io/text_safety.h"
#include "memory/error.h"
#include "memory/out_of_memory.h"

namespace cpufold {

int run_cli(int argc, char** argv) {
  CLI::App app{
      "cpufold: AlphaFold2 protein structure inference on CPUs.\n"
      "Loads real AlphaFold2 parameter files (.npz) or cpufold's memory-mapped HDF5 copies."};
  app.set_version_flag("--version", std::string("cpufold ") + CPUFOLD_VERSION);
  app.require_subcommand(1);
  add_info_command(app);
  add_convert_params_command(app);
  add_evaluate_command(app);
  add_predict_command(app);
  add_bench_command(app);

  try {
    detail::row_kernel_choice();  // a bad CPUFOLD_ROW_KERNELS fails here, before any work
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const Error& e) {
    std::cerr << "cpufold: error: " << text::safe_text(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the file system refuses (too long, not searchable): the
    // message names it, and it is bad input, not a bug.
    std::cerr << "cpufold: error: " << text::safe_text(e.what()) << "\n";
    return InputError("").exit_code();
  } catch (const std::bad_alloc&) {
    const BudgetError e = out_of_memory("cpufold");
    std::cerr << "cpufold: error: " << text::safe_text(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "cpufold: internal error: " << text::safe_text(e.what()) << "\n";
    return InternalError("").exit_code();
  }
  return 0;
}

}  // namespace cpufold
