#include "pipeline/cli/cli.h"

#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string_view>
#include <vector>

#include "io/text_safety.h"
#include "memory/error.h"
#include "memory/out_of_memory.h"
#include "ops/row_kernels.h"

namespace cpufold {

const char* const kExitStatusHelp = R"(EXIT STATUS (the same for every cpufold command)
  0  success (predict: every job done or skipped as already done); --help and
     --version
  2  usage or input error: unknown command or option, missing argument or
     value, option given twice, value out of range; unreadable or invalid
     input (predict: a job failed on its input; the other jobs were folded)
  3  weights: parameter file missing, unreadable, corrupt, holding NaN or
     Inf, or not the model asked for
  4  memory: an allocation failed or the run does not fit the memory budget
     (the message gives the limit and what to do; predict: every failed job
     ran out of memory)
  5  internal error: a bug in cpufold, please report it with the command
     line; also evaluate outputs holding NaN or Inf (nothing is written)
  6  an external program (search: jackhmmer, hhblits, mmseqs) failed or
     crashed; the message gives its command and the end of its stderr (a
     program not installed, or a database missing or truncated, is 2; one
     killed by SIGKILL, most likely out of memory, is 4)
  cpufold never exits with 1; a status above 128 means a signal killed it.
)";

namespace {

// "cpufold bench features" for the bench features app.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* p = app.get_parent(); p != nullptr; p = p->get_parent()) {
    path = p->get_name() + " " + path;
  }
  return path;
}

// The (sub)command whose arguments were being read when parsing stopped.
CLI::App& innermost_command(CLI::App& app) {
  CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  return *command;
}

std::string command_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

bool is_option(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-';
}

// CLI11's message for a parse error, reworded where a new user would be puzzled.
std::string usage_message(CLI::App& command, const CLI::ParseError& e) {
  // The first argument nothing took ("--" only ends the options).
  std::string first;
  for (const std::string& arg : command.remaining()) {
    if (arg != "--") {
      first = arg;
      break;
    }
  }
  const bool wants_command =
      command.get_require_subcommand_min() > 0 && command.get_subcommands().empty();
  if (wants_command && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    if (first.empty()) return "a command is required; the commands are " + command_names(command);
    if (is_option(first)) return "unknown option '" + first + "'";
    return "unknown command '" + first + "'; the commands are " + command_names(command);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !first.empty()) {
    if (is_option(first)) return "unknown option '" + first + "'";
    return "unexpected argument '" + first + "'";
  }
  const std::string what = e.what();
  // CLI11: "Could not convert: --quiet = maybe" (a value for a flag, or an unchecked type).
  const std::string unconverted = "Could not convert: ";
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr && what.starts_with(unconverted)) {
    const std::size_t equals = what.find(" = ");
    const std::string name = what.substr(unconverted.size(), equals - unconverted.size());
    const std::string value = equals == std::string::npos ? "" : what.substr(equals + 3);
    const CLI::Option* option = command.get_option_no_throw(name);
    if (option != nullptr && option->get_expected_max() == 0) {
      return name + " is a flag and takes no value (given '" + value + "')";
    }
    return name + ": '" + value + "' is not a valid value";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    const std::string name = what.substr(0, what.find(':'));
    if (const CLI::Option* option = command.get_option_no_throw(name)) {
      if (option->count() > 1) return name + " was given more than once; give it once";
      if (option->count() == 0) return name + " needs a value";
    }
  }
  return what;
}

int report_usage_error(CLI::App& app, const CLI::ParseError& e) {
  CLI::App& command = innermost_command(app);
  const std::string path = command_path(command);
  const auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(command.get_formatter());
  std::cerr << path << ": error: " << text::safe_text(usage_message(command, e)) << "\n"
            << (formatter ? formatter->make_usage(&command, path) : std::string()) << "Run '"
            << path << " --help' for more information.\n";
  return InputError("").exit_code();
}

// Every command's --help lists its commands as such and ends with the exit statuses (unless it
// wrote its own footer).
void add_exit_status_footers(CLI::App& app) {
  if (app.get_footer().empty()) app.footer(kExitStatusHelp);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->group("Commands");
    add_exit_status_footers(*sub);
  }
}

}  // namespace

int report_failure(const std::string& command, const std::exception_ptr& error, std::ostream& err) {
  try {
    std::rethrow_exception(error);
  } catch (const InternalError& e) {
    err << command << ": internal error: " << text::safe_text(e.what()) << "\n";
    return e.exit_code();
  } catch (const Error& e) {
    err << command << ": error: " << text::safe_text(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the file system refuses (too long, not searchable): the
    // message names it, and it is bad input, not a bug.
    err << command << ": error: " << text::safe_text(e.what()) << "\n";
    return InputError("").exit_code();
  } catch (const std::bad_alloc&) {
    const BudgetError e = out_of_memory("cpufold");
    err << command << ": error: " << text::safe_text(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    err << command << ": internal error: " << text::safe_text(e.what()) << "\n";
  } catch (...) {
    err << command << ": internal error: an unknown exception\n";
  }
  return InternalError("").exit_code();
}

int run_cli(int argc, char** argv) {
  CLI::App app{
      "cpufold: AlphaFold2 protein structure inference on CPUs.\n"
      "Loads real AlphaFold2 parameter files (.npz) or cpufold's memory-mapped HDF5 copies.",
      "cpufold"};
  app.get_formatter()->label("SUBCOMMAND", "COMMAND");
  app.set_version_flag("--version", std::string("cpufold ") + CPUFOLD_VERSION);
  app.require_subcommand(1);
  add_info_command(app);
  add_convert_params_command(app);
  add_evaluate_command(app);
  add_predict_command(app);
  add_plan_command(app);
  add_profile_command(app);
  add_bench_command(app);
  add_exit_status_footers(app);

  try {
    detail::row_kernel_choice();  // a bad CPUFOLD_ROW_KERNELS fails here, before any work
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report_usage_error(app, e);
  } catch (...) {
    return report_failure(command_path(innermost_command(app)), std::current_exception(),
                          std::cerr);
  }
  return 0;
}

}  // namespace cpufold
