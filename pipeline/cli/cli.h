// The `cpufold` command line: one CLI11 table of subcommands over the library.
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <iosfwd>
#include <string>

namespace cpufold {

// The exit statuses of every command, as printed in each --help's EXIT STATUS section (README's
// "Exit status" table says the same).
extern const char* const kExitStatusHelp;

// Parses argv, runs the chosen subcommand and returns the exit status: 0 success (and --help,
// --version), 2 usage or input error, 3 weights, 4 memory, 5 internal error.
int run_cli(int argc, char** argv);

// Writes "COMMAND: error: ..." for an exception that ended a command and returns its exit
// status: an Error's own code, 4 for std::bad_alloc, 5 for anything else.
int report_failure(const std::string& command, const std::exception_ptr& error, std::ostream& err);

// Each subcommand registers its options and a callback on the app.
void add_info_command(CLI::App& app);
void add_convert_params_command(CLI::App& app);
void add_evaluate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
// `bench block` and `bench model`, under `bench` (command_bench_block.cpp,
// command_bench_model.cpp).
void add_bench_block_command(CLI::App& bench);
// `bench calibrate`: the planner's time model for this machine (command_bench_calibrate.cpp).
void add_bench_calibrate_command(CLI::App& bench);
void add_bench_model_command(CLI::App& bench);
void add_predict_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_profile_command(CLI::App& app);
// `search`: MSAs from local databases (command_search.cpp).
void add_search_command(CLI::App& app);

}  // namespace cpufold
