#include "pipeline/cli/colabfold_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "memory/error.h"
#include "pipeline/cli/option_checks.h"

namespace cpufold {
namespace {

using S = OptionStatus;

constexpr std::string_view kNoTemplates =
    "cpufold does not query ColabFold's template server: use --templates with --template-db "
    "DIR (AlphaFold2's data directory) or --custom-template-path DIR";
constexpr std::string_view kNoTemplateCache =
    "cpufold keeps no template cache: each job's hits are kept in OUTPUT_DIR/JOB_env/ and "
    "reused on a rerun; drop the option";
constexpr std::string_view kMsaServer =
    "cpufold does not query the MMseqs2 MSA server: compute MSAs with `colabfold_batch "
    "--msa-only` or colabfold_search and pass them with --msa-dir DIR (or as A3M input), or "
    "use --msa-mode single_sequence";

// {name, flag, status, accepted value, refused values, note, instead}
constexpr ColabfoldOption kOptions[] = {
    // MSA arguments
    {"--msa-only", true, S::unsupported, "", "yes", "", kMsaServer},
    {"--msa-mode", false, S::implemented, "single_sequence", "",
     "single_sequence: jobs without an MSA (A3M input or --msa-dir file) fold from the query "
     "alone; the mmseqs2_* values (ColabFold's default mmseqs2_uniref_env): every job needs an "
     "MSA, a job without one is refused (cpufold queries no server)",
     ""},
    {"--pair-mode", false, S::no_op, "unpaired_paired", "",
     "complexes only (cpufold folds monomers)", ""},
    {"--pair-strategy", false, S::no_op, "greedy", "", "complexes only (cpufold folds monomers)",
     ""},
    {"--templates", true, S::implemented, "", "",
     "up to 4 templates for models 1 and 2 by AlphaFold2's template pipeline: hits from "
     "--msa-dir's JOB/msas/pdb_hits.sto or .hhr, else hmmsearch of --template-db DIR's "
     "pdb_seqres.txt (kept in OUTPUT_DIR/JOB_env/pdb_hits.sto); structures from "
     "pdb_mmcif/mmcif_files/",
     ""},
    {"--custom-template-path", false, S::implemented, "templates", "",
     "the mmCIF files in DIR are the template database (searched with hmmsearch, where "
     "ColabFold uses hhsearch); implies --templates",
     ""},
    {"--custom-template-cache-path", false, S::unsupported, "", "cache", "", kNoTemplateCache},
    {"--max-template-date", false, S::implemented, "2100-01-01", "",
     "templates released after this date are skipped (default 2100-01-01)", ""},
    {"--max-template-hits", false, S::no_op, "20", "",
     "hits are examined until 4 templates are kept (what AF2 and ColabFold feed the models)", ""},
    {"--pdb-hit-file", false, S::unsupported, "", "pdb70.m8", "", kNoTemplates},
    {"--local-pdb-path", false, S::unsupported, "", "pdb", "", kNoTemplates},
    // Prediction arguments
    {"--num-recycle", false, S::implemented, "1", "", "recycling iterations (default 3)", ""},
    {"--recycle-early-stop-tolerance", false, S::implemented, "0.5", "",
     "stops recycling once the CA-CA distances change by less than this (RMS, Angstrom)", ""},
    {"--num-ensemble", false, S::implemented, "2", "",
     "AF2 ensembling: N trunk passes per recycle, each on its own MSA sample (sample r x N + "
     "e), pair, single and first MSA row averaged, the MSA representation the first pass's",
     ""},
    {"--num-seeds", false, S::implemented, "1", "", "seeds random_seed .. random_seed+N-1", ""},
    {"--random-seed", false, S::implemented, "0", "",
     "seed of the MSA sampling and masking (and of --sort-queries-by random)", ""},
    {"--num-models", false, S::implemented, "1", "", "the first N of --model-order", ""},
    {"--model-type", false, S::implemented, "alphafold2_ptm",
     "alphafold2_multimer_v1,alphafold2_multimer_v2,alphafold2_multimer_v3,deepfold_v1",
     "auto, alphafold2_ptm and alphafold2",
     "cpufold runs the AlphaFold2 monomer models only: use --model-type auto, alphafold2_ptm "
     "or alphafold2"},
    {"--model-order", false, S::implemented, "1", "",
     "sorted, as ColabFold sorts it; the first --num-models of the sorted list run", ""},
    {"--initial-guess", true, S::unsupported, "", "yes", "",
     "cpufold cannot start from a given structure yet: drop the option"},
    {"--use-dropout", true, S::unsupported, "", "yes", "",
     "cpufold has no inference dropout yet: drop the option; for more diverse samples use "
     "--num-seeds N or a smaller --max-msa"},
    {"--max-seq", false, S::implemented, "8", "",
     "MSA cluster rows (default 512 for every model, as ColabFold)", ""},
    {"--max-extra-seq", false, S::implemented, "8", "",
     "extra MSA rows (default 5120 for every model, as ColabFold; AF2 has 1024 for models 2, 5)",
     ""},
    {"--max-msa", false, S::implemented, "8:16", "",
     "max-seq:max-extra-seq in one option; overrides --max-seq and --max-extra-seq", ""},
    {"--disable-cluster-profile", true, S::no_op, "", "",
     "ColabFold applies it to multimer models only; monomer models always use the cluster "
     "profile, in ColabFold and in cpufold",
     ""},
    {"--calc-extra-ptm", true, S::no_op, "", "",
     "ColabFold skips it for single chains (ipTM and actifpTM need complexes)", ""},
    {"--no-use-probs-extra", true, S::no_op, "", "", "only with --calc-extra-ptm", ""},
    {"--data", false, S::implemented, "", "",
     "directory holding params/ (default $CPUFOLD_DATA, else ~/.cache/colabfold)", ""},
    // Relaxation arguments
    {"--amber", true, S::no_op, "", "",
     "accepted with one warning per run: cpufold has no Amber relaxation, structures are "
     "written unrelaxed (JOB_unrelaxed_rank_K_TAG.pdb, as ColabFold names them; no "
     "JOB_relaxed_* files)",
     ""},
    {"--num-relax", false, S::no_op, "1", "",
     "as --amber: a value above 0 is accepted with one warning, structures stay unrelaxed", ""},
    {"--relax-max-iterations", false, S::no_op, "2000", "", "relaxation only (off)", ""},
    {"--relax-tolerance", false, S::no_op, "2.39", "", "relaxation only (off)", ""},
    {"--relax-stiffness", false, S::no_op, "10.0", "", "relaxation only (off)", ""},
    {"--relax-max-outer-iterations", false, S::no_op, "3", "", "relaxation only (off)", ""},
    {"--use-gpu-relax", true, S::no_op, "", "", "relaxation only (off); cpufold uses no GPU", ""},
    // Output arguments
    {"--rank", false, S::implemented, "ptm", "iptm,multimer", "auto (= plddt), plddt and ptm",
     "ipTM ranking needs a complex; cpufold folds monomers: use --rank auto, plddt or ptm"},
    {"--stop-at-score", false, S::implemented, "100", "",
     "once a prediction's ranking score (mean pLDDT, or 100 x pTM with --rank ptm) exceeds it, "
     "recycling stops and the job's remaining models and seeds are skipped",
     ""},
    {"--jobname-prefix", false, S::implemented, "job", "",
     "jobs are named PREFIX_0, PREFIX_1, ... (zero-padded to the job count's digits) in run "
     "order",
     ""},
    {"--save-all", true, S::implemented, "", "",
     "every model output in HDF5 (JOB_all_rank_K_TAG.h5, the `cpufold evaluate` outputs/ "
     "names) instead of ColabFold's pickle",
     ""},
    {"--save-recycles", true, S::implemented, "", "",
     "the structure of every recycle, JOB_unrelaxed_rank_K_TAG.rR.pdb (R = 0..), pLDDT of "
     "that recycle as B-factor",
     ""},
    {"--save-single-representations", true, S::implemented, "", "",
     "JOB_single_repr_rank_K_TAG.npy: the MSA representation's first row [N_res, c_m] (what "
     "ColabFold saves as single), f32 where ColabFold writes f16",
     ""},
    {"--save-pair-representations", true, S::implemented, "", "",
     "JOB_pair_repr_rank_K_TAG.npy: the pair representation [N_res, N_res, c_z], f32 where "
     "ColabFold writes f16",
     ""},
    {"--skip-output", false, S::implemented, "msa,plots", "",
     "comma-separated msa, plots, pae_json: JOB.a3m, the PNG plots, "
     "JOB_predicted_aligned_error_v1.json are not written",
     ""},
    {"--overwrite-existing-results", true, S::implemented, "", "",
     "redo jobs that are done (default: skip them)", ""},
    {"--zip", true, S::implemented, "", "",
     "each job's files go into JOB.result.zip (originals deleted; cite.bibtex and config.json "
     "stay); the zip marks the job done",
     ""},
    {"--sort-queries-by", false, S::implemented, "random", "",
     "none, length (default), msa_depth (deepest own A3M first), random (shuffled with "
     "--random-seed, reproducible)",
     ""},
    // Advanced arguments
    {"--host-url", false, S::no_op, "https://api.colabfold.com", "",
     "cpufold queries no MSA server: a job without an MSA is refused, never folded without one",
     ""},
    {"--disable-unified-memory", true, S::no_op, "", "", "GPU memory setting; cpufold uses no GPU",
     ""},
    {"--recompile-padding", false, S::no_op, "10", "", "cpufold compiles nothing and never pads",
     ""},
    {"--use-pallas", true, S::no_op, "", "", "GPU kernels; cpufold uses oneDNN on CPUs", ""},
    {"--compile-mode", false, S::no_op, "tuned", "", "GPU kernel tuning; cpufold compiles nothing",
     ""},
    {"--debug-logging", true, S::no_op, "", "", "log.txt already has every progress line", ""},
    // AlphaFold3 arguments
    {"--af3-json", true, S::unsupported, "", "yes", "",
     "cpufold writes no AlphaFold3 input: run colabfold_batch --af3-json"},
};

bool listed(std::string_view list, std::string_view value) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    if (list.substr(0, comma) == value) return true;
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return false;
}

[[noreturn]] void refuse(const ColabfoldOption& o, const std::string& shown) {
  throw InputError("cpufold does not support " + std::string(o.name) +
                   (shown.empty() ? "" : " " + shown) + " yet: " + std::string(o.instead));
}

}  // namespace

std::span<const ColabfoldOption> colabfold_batch_options() {
  return kOptions;
}

const ColabfoldOption* find_colabfold_option(std::string_view name) {
  for (const ColabfoldOption& o : kOptions) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

std::string_view status_name(OptionStatus status) {
  switch (status) {
    case S::implemented:
      return "implemented";
    case S::no_op:
      return "accepted, no effect";
    case S::off_only:
      return "off value only";
    case S::unsupported:
      return "not supported yet";
  }
  return "";
}

std::optional<std::string> ColabfoldValues::value(const std::string& name) const {
  const auto it = options_.find(name);
  if (it == options_.end() || it->second->count() == 0) return std::nullopt;
  return storage_.at(name);
}

void add_colabfold_options(CLI::App& cmd, ColabfoldValues& values) {
  for (const ColabfoldOption& o : kOptions) {
    const std::string name(o.name);
    if (cmd.get_option_no_throw(name) != nullptr) continue;
    const std::string help = std::string("colabfold_batch option: ") +
                             std::string(status_name(o.status)) +
                             (o.note.empty() ? "" : " (" + std::string(o.note) + ")");
    std::string& storage = values.storage_[name];
    CLI::Option* opt = nullptr;
    if (name == "--initial-guess" || name == "--use-pallas") {
      // argparse nargs='?': a value may follow.
      opt = cmd.add_option(name, storage, help)->expected(0, 1);
    } else if (o.flag) {
      opt = cmd.add_flag(name, help);  // store_true: takes no value
    } else {
      opt = cmd.add_option(name, storage, help);
    }
    opt->group("colabfold_batch compatibility (see README)");
    values.options_[name] = opt;
  }
}

void refuse_unsupported_value(std::string_view name, const std::string& value) {
  const ColabfoldOption* o = find_colabfold_option(name);
  if (o == nullptr) throw InternalError("not a colabfold_batch option: " + std::string(name));
  switch (o->status) {
    case S::no_op:
      return;
    case S::unsupported:
      refuse(*o, value);
    case S::off_only:
      if (value != o->accepted_value) refuse(*o, value);
      return;
    case S::implemented:
      if (listed(o->refused_values, value)) refuse(*o, value);
      return;
  }
}

void refuse_unsupported(const ColabfoldValues& values) {
  for (const ColabfoldOption& o : kOptions) {
    if (const auto v = values.value(std::string(o.name))) {
      if (o.flag && o.status == S::off_only) refuse(o, *v);
      refuse_unsupported_value(o.name, *v);
    }
  }
}

MaxMsa parse_max_msa(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    throw InputError("--max-msa: '" + text +
                     "' is not MAX_SEQ:MAX_EXTRA_SEQ, two whole numbers like 512:1024");
  }
  const std::string option = "--max-msa '" + text + "'";
  MaxMsa m;
  m.max_seq =
      parse_integer(option + " MAX_SEQ", text.substr(0, colon), kMaxSeqRange.min, kMaxSeqRange.max);
  m.max_extra_seq = parse_integer(option + " MAX_EXTRA_SEQ", text.substr(colon + 1),
                                  kMaxExtraSeqRange.min, kMaxExtraSeqRange.max);
  return m;
}

bool parse_msa_mode(const std::string& text) {
  if (text == "single_sequence") return true;
  if (text == "mmseqs2_uniref_env" || text == "mmseqs2_uniref_env_envpair" ||
      text == "mmseqs2_uniref") {
    return false;
  }
  throw InputError("--msa-mode '" + text +
                   "': expected single_sequence, mmseqs2_uniref_env (the default), "
                   "mmseqs2_uniref_env_envpair or mmseqs2_uniref");
}

SkipOutputs parse_skip_output(const std::string& text) {
  SkipOutputs skip;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "msa") {
      skip.msa = true;
    } else if (item == "plots") {
      skip.plots = true;
    } else if (item == "pae_json") {
      skip.pae_json = true;
    } else if (!item.empty()) {
      throw InputError("--skip-output lists msa, plots and pae_json (comma-separated), not '" +
                       std::string(item) + "'");
    }
  }
  return skip;
}

}  // namespace cpufold
