// The `cpufold` command line: one CLI11 table of subcommands over the library.
#pragma once

#include <CLI/CLI.hpp>

namespace cpufold {

// Parses argv, runs the chosen subcommand, and maps errors to exit codes: input 2, weights 3,
// budget 4, internal 5, command-line usage as CLI11 reports it.
int run_cli(int argc, char** argv);

// Each subcommand registers its options and a callback on the app.
void add_info_command(CLI::App& app);
void add_convert_params_command(CLI::App& app);
void add_evaluate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_predict_command(CLI::App& app);

}  // namespace cpufold
