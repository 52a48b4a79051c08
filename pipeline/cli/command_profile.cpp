// `cpufold profile`: how much memory a run of each length needs, and whether the memory
// planner's prediction holds. Each length runs the whole model on random inputs of real sizes
// (or with --blocks-only one block of each stack at the run's plan) in a child process of this
// binary (the hidden --child option), measured per stage.

#include <algorithm>
#include <iostream>
#include <memory>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "ops/compute_precision.h"
#include "pipeline/batch/profile_children.h"
#include "pipeline/batch/profile_files.h"
#include "pipeline/batch/profile_record.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/runner/model_loader.h"
#include "pipeline/runner/run_plan.h"

namespace cpufold {
namespace {

constexpr const char* kProfileManual = R"(
WHAT IT MEASURES
  Each length runs in a fresh child process (so that one length's heap does not
  inflate the next and a length that runs out of memory fails alone): the
  weights are loaded, random inputs of the given sizes are generated (fixed
  seed; the values mean nothing, only the sizes matter) and the whole model
  runs. Recorded per length: the memory plan (chunk size, predicted peak, each
  planned block), the measured peak resident memory of the process, and the
  peak and wall time of each stage (load, features, trunk, structure, heads).
  A stage's peak is the kernel's VmHWM, reset as the stage begins (write "5"
  to /proc/self/clear_refs); where the kernel refuses, the resident size is
  sampled every millisecond instead (column stage_peak_method says which).

BLOCKS ONLY (--blocks-only)
  At 2,500-4,000 residues a whole run takes hours; one block takes minutes.
  Each child loads the weights and makes the same plan (recorded as above),
  reads every page of the weights (as resident as a run has them by its
  peak), then runs one extra-MSA block and one Evoformer block of the model
  at that length, with the plan's chunk for each and the model's precision,
  on random activations. Per block: its wall time, its measured peak and its
  predicted peak: the plan's process and weights + the block's activations
  + its planned scratch (what `cpufold bench block` compares with too). The
  row's predicted/measured/ratio are those of the block predicted the
  larger; plan_peak_bytes keeps the whole run's plan. A block that cannot
  fit the memory available (or --mem-budget) fails its length with status 4
  before it allocates anything.

OUTPUT (in --out)
  profile.csv  one row per length (columns in README, "cpufold profile")
  profile.png  peak memory against length: predicted (line), measured
               (points), each stage's measured peak (pale), and below it
               measured / predicted with the 10% band
  stderr       one line per length: predicted, measured and their ratio
               (blocks only: also one line per block as it ends)
  A length that fails is recorded as failed with the reason; the others go on.
  The status is then that of the failure (4 when every failure was memory).

EXAMPLES
  cpufold profile --params params_model_1_ptm.h5 --lengths 64,128,256,512
  cpufold profile --params params_model_3_ptm.h5 --lengths 100,200 --templates 0 \
      --msa-rows 128 --extra-rows 1024 --out profile_small
  cpufold profile --params params_model_1_ptm.h5 --lengths 1000,2500,4000 --blocks-only
)";

struct ProfileArgs {
  std::string lengths, out = "profile";
  RandomRunSizes sizes;
  bool blocks_only = false;
  bool child = false;
  CommonOptions common;
  const CLI::App* command = nullptr;  // what was parsed, for the children's command lines
};

// "64,128,256": distinct lengths, at least one, returned in ascending order.
std::vector<std::int64_t> parse_lengths(const std::string& text) {
  std::vector<std::int64_t> lengths;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    if (item.find_first_not_of(" \t") == std::string::npos) {
      throw InputError("--lengths: '" + text +
                       "' has an empty entry; give residue counts separated by commas, e.g. "
                       "64,128,256");
    }
    const std::int64_t n = parse_integer("--lengths", item, 1, kMaxResidues, "residues per run");
    if (std::find(lengths.begin(), lengths.end(), n) != lengths.end())
      throw InputError("--lengths: " + std::to_string(n) +
                       " is given twice; give each length once");
    lengths.push_back(n);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}

// The child's command line for one length: the parent's options with the sizes resolved.
std::vector<std::string> child_args(const ProfileArgs& a, std::int64_t templates,
                                    std::int64_t n_res) {
  std::vector<std::string> args = {"profile",
                                   "--lengths",
                                   std::to_string(n_res),
                                   "--msa-rows",
                                   std::to_string(a.sizes.msa_rows),
                                   "--extra-rows",
                                   std::to_string(a.sizes.extra_rows),
                                   "--templates",
                                   std::to_string(templates),
                                   "--recycles",
                                   std::to_string(a.sizes.recycles),
                                   "--child"};
  if (a.blocks_only) args.emplace_back("--blocks-only");
  const std::vector<std::string> shared = common_option_args(*a.command);
  args.insert(args.end(), shared.begin(), shared.end());
  return args;
}

// In the child: one length, its plan and then its result on stdout.
void run_child(const ProfileArgs& a, std::int64_t n_res) {
  ProfileRequest r;
  static_cast<SharedRunOptions&>(r) = a.common.run;
  r.params = a.common.params;
  r.sizes = {n_res, a.sizes.msa_rows, a.sizes.extra_rows, a.sizes.templates.value_or(0),
             a.sizes.recycles};
  r.blocks_only = a.blocks_only;
  const LengthProfile p = profile_length(
      r,
      [](const LengthProfile& planned) {
        std::cout << profile_record(kProfilePlanTag, planned) << std::flush;
      },
      [](const ProfiledBlock& block) { std::cout << profile_block_record(block) << std::flush; });
  std::cout << profile_record(kProfileResultTag, p) << std::flush;
}

// The status of a profile with failed lengths: memory when every failure was, else the first
// other failure's.
[[noreturn]] void refuse_failures(const std::vector<ProfiledLength>& runs) {
  std::size_t failed = 0;
  int code = 4;
  for (const ProfiledLength& r : runs) {
    if (r.profile.ok) continue;
    ++failed;
    if (code == 4 && r.exit_code != 4) code = r.exit_code;
  }
  const std::string what = std::to_string(failed) + " of " + std::to_string(runs.size()) +
                           " length(s) failed (reasons in profile.csv); the others are recorded";
  if (code == 4) throw BudgetError(what);
  if (code == 2) throw InputError(what);
  if (code == 3) throw WeightsError(what);
  throw InternalError(what);
}

void run_profile(ProfileArgs& a) {
  const std::vector<std::int64_t> lengths = parse_lengths(a.lengths);
  if (a.child) {
    resolve_common_options(a.common);
    if (lengths.size() != 1) throw InputError("--child measures one length");
    run_child(a, lengths.front());
    return;
  }
  // Resolved in the parent too, so bf16 on a CPU without it is refused before any child runs.
  resolve_common_options(a.common, [](const std::string& line) { std::cerr << line << "\n"; });
  const DType precision = a.common.run.precision;
  std::string model;
  {  // the parent only needs the configuration; the children load the weights
    const ModelWeights weights = open_model_weights(a.common.params);
    model = weights.preset;
    if (!a.sizes.templates) a.sizes.templates = weights.config.templates ? 4 : 0;
    require_templates(weights, *a.sizes.templates);
  }
  const ProfileSizes sizes{0, a.sizes.msa_rows, a.sizes.extra_rows, *a.sizes.templates,
                           a.sizes.recycles};
  const std::string title =
      std::string(a.blocks_only ? "Peak memory per block: " : "Peak memory per run: ") + model +
      " (" + a.common.params.filename().string() + ")";
  std::string subtitle = std::to_string(a.sizes.msa_rows) + " MSA rows, " +
                         std::to_string(a.sizes.extra_rows) + " extra MSA rows, " +
                         std::to_string(*a.sizes.templates) + " templates, " +
                         std::to_string(a.sizes.recycles) + " recycle(s); chunk " +
                         (a.common.run.chunks ? chunk_sizes_token(*a.common.run.chunks)
                                              : std::string("chosen by the planner")) +
                         "; " + precision_name(precision) + "; random inputs at real sizes";
  if (a.common.run.mem_budget) subtitle += "; budget " + format_bytes(*a.common.run.mem_budget);
  if (a.blocks_only) {
    subtitle = "single-block peaks (one extra-MSA and one Evoformer block, the plan's chunks); " +
               subtitle;
  }
  // An output directory that cannot be made fails now, not after hours of runs.
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (!std::filesystem::is_directory(a.out)) {
    throw InputError("--out " + a.out + ": cannot create the output directory" +
                     (ec ? " (" + ec.message() + ")" : "") + "; give a directory");
  }
  std::cerr << "profile: " << model << ", " << lengths.size() << " length(s), " << a.sizes.msa_rows
            << " MSA rows, " << a.sizes.extra_rows << " extra rows, " << *a.sizes.templates
            << " templates, " << a.sizes.recycles << " recycle(s); each in its own process"
            << (a.blocks_only ? ", one extra-MSA and one Evoformer block each" : "") << "\n";
  // The files are rewritten after every length: a long profile that is stopped keeps its rows.
  std::vector<LengthProfile> rows;
  std::vector<std::filesystem::path> written;
  const std::vector<ProfiledLength> runs = profile_in_children(
      lengths, sizes, [&](std::int64_t n) { return child_args(a, *a.sizes.templates, n); },
      [&](const ProfiledBlock& b, std::int64_t n, std::size_t i) {
        std::cerr << "profile: " << profile_block_progress_line(b, n, i, lengths.size()) << "\n";
      },
      [&](const ProfiledLength& p, std::size_t i) {
        std::cerr << "profile: " << profile_progress_line(p, i, lengths.size()) << "\n";
        rows.push_back(p.profile);
        written = write_profile_files(a.out, rows, title, subtitle);
      });
  for (const auto& path : written) std::cout << "wrote " << path.string() << "\n";
  std::cout.flush();
  for (const ProfiledLength& r : runs) {
    if (!r.profile.ok) refuse_failures(runs);
  }
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "How much memory a run of each length needs, and whether the memory planner's "
      "prediction holds: runs the whole model on random inputs of each length (each in its "
      "own process; --blocks-only: one block of each stack) and writes profile.csv and "
      "profile.png (peak memory against length, predicted and measured, per stage).");
  cmd->footer(std::string(kProfileManual) + kExitStatusHelp);
  cmd->add_option("--lengths", args->lengths,
                  "residue counts to run, comma-separated, e.g. 64,128,256 (each once)")
      ->required();
  add_random_run_options(*cmd, args->sizes);
  cmd->add_option("--out", args->out, "directory for profile.csv and profile.png (default profile)")
      ->check(output_directory_option());
  cmd->add_flag("--blocks-only", args->blocks_only,
                "plan each length as a run, then run one extra-MSA and one Evoformer block at "
                "the plan's chunks instead of the whole model: minutes instead of hours at "
                "2,500-4,000 residues; records each block's time and predicted and measured peak");
  cmd->add_flag("--child", args->child, "measure one length in this process (internal)")->group("");
  add_common_options(*cmd, args->common, Command::profile);
  args->command = cmd;
  cmd->callback([args] { run_profile(*args); });
}

}  // namespace cpufold
