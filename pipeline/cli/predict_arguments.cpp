#include "pipeline/cli/predict_arguments.h"

#include <omp.h>

#include <algorithm>
#include <iostream>
#include <regex>

#include "memory/error.h"
#include "pipeline/batch/job_shards.h"
#include "pipeline/batch/predict_jobs.h"
#include "pipeline/batch/ranking.h"
#include "pipeline/cli/option_checks.h"
#include "pipeline/runner/params_directory.h"

namespace cpufold {

namespace {

// Input, MSAs, parameters, models, recycling, ensembling, seeds and MSA depth.
void add_model_arguments(CLI::App& cmd, PredictArguments& args, bool output_dir_required) {
  PredictOptions& o = args.options;
  CLI::Option* input =
      cmd.add_option("INPUT", o.input, "FASTA, A3M, CSV/TSV file or a directory of them");
  if (output_dir_required) {
    input->required();
    cmd.add_option("OUTPUT_DIR", o.output_dir, "results directory (created when missing)")
        ->required();
  }

  cmd.add_option("--msa-dir", o.msa_dir,
                 "precomputed MSAs per job (layouts below); a job without an A3M input needs its "
                 "MSA here, unless --msa-mode single_sequence");
  cmd.add_flag("--templates", o.templates,
               "up to 4 templates for models 1 and 2, by AlphaFold2's template pipeline: hits from "
               "--msa-dir's JOB/msas/pdb_hits.sto|.hhr, else an hmmsearch of --template-db");
  cmd.add_option("--template-db", o.template_db,
                 "AlphaFold2 data directory for templates: pdb_seqres/pdb_seqres.txt (searched "
                 "with hmmsearch) and pdb_mmcif/mmcif_files/ (the hits' structures)");
  cmd.add_option("--custom-template-path", o.custom_template_path,
                 "directory of mmCIF files searched as the template database instead of the PDB "
                 "(implies --templates)");
  cmd.add_option("--max-template-date", o.max_template_date,
                 "YYYY-MM-DD: templates released after it are skipped")
      ->default_val("2100-01-01");
  cmd.add_option("--data", args.data,
                 "directory holding params/params_model_N[_ptm].{npz,h5} (default: "
                 "$CPUFOLD_DATA, else ~/.cache/colabfold)");
  cmd.add_option("--num-models", o.num_models, "number of models to run, from --model-order")
      ->default_val(5)
      ->transform(integer_in(kNumModelsRange));
  cmd.add_option("--model-order", args.model_order,
                 "AlphaFold2 models to choose from; sorted as ColabFold does, the first "
                 "--num-models of the sorted list run in that order")
      ->default_val("1,2,3,4,5")
      ->check(model_order_list());
  cmd.add_option("--model-type", args.model_type,
                 "auto (= alphafold2_ptm), alphafold2_ptm or alphafold2")
      ->default_val("auto");
  cmd.add_option("--num-recycle", o.num_recycle, "recycling iterations after the first pass")
      ->default_val(3)
      ->transform(integer_in(kNumRecycleRange));
  cmd.add_option("--recycle-early-stop-tolerance", o.recycle_early_stop_tolerance,
                 "stop recycling once the CA-CA distances change by less than this (RMS, "
                 "Angstrom); 0: off")
      ->transform(real_in(0, kMaxEarlyStopTolerance));
  cmd.add_option("--num-ensemble", o.num_ensemble,
                 "AF2 ensembling: trunk passes per recycle, each on its own MSA sample, "
                 "representations averaged (costs N times the trunk)")
      ->default_val(1)
      ->transform(integer_in(kNumEnsembleRange));
  cmd.add_option("--num-seeds", o.num_seeds,
                 "seeds per model: random_seed .. random_seed + num_seeds - 1")
      ->default_val(1)
      ->transform(integer_in(kNumSeedsRange));
  cmd.add_option("--random-seed", o.random_seed,
                 "seed of the MSA sampling and masking (reproducible on every machine)")
      ->default_val(0)
      ->transform(integer_in(kRandomSeedRange));
  cmd.add_option("--rank", args.rank,
                 "rank predictions by auto (= plddt for monomers), plddt (mean pLDDT) or ptm")
      ->default_val("auto");
  cmd.add_option("--max-seq", args.max_seq,
                 "MSA cluster rows fed to the Evoformer (default: ColabFold's 512 for every "
                 "model)")
      ->transform(integer_in(kMaxSeqRange));
  cmd.add_option("--max-extra-seq", args.max_extra_seq,
                 "extra MSA rows (default: ColabFold's 5120 for every model; AF2 has 1024 for "
                 "models 2 and 5)")
      ->transform(integer_in(kMaxExtraSeqRange));
}

// predict only: the local search of the jobs without an MSA (plan cannot size an MSA not
// searched yet).
void add_search_arguments(CLI::App& cmd, PredictArguments& args) {
  PredictOptions& o = args.options;
  cmd.add_option("--databases", o.databases,
                 "search local databases for the jobs without an MSA (as `cpufold search`), "
                 "keeping the MSAs in OUTPUT_DIR/msas/; AlphaFold2's data directory or "
                 "ColabFold's MMseqs2 databases; with --templates also the template database");
  cmd.add_option("--search-method", o.search_method,
                 "with --databases: jackhmmer (AF2 reduced_dbs), hhblits (AF2 full_dbs) or "
                 "mmseqs2 (ColabFold)")
      ->check(CLI::IsMember({"jackhmmer", "hhblits", "mmseqs2"}))
      ->capture_default_str();
  cmd.add_option_function<std::size_t>(
         "--search-memory", [&o](std::size_t bytes) { o.search_memory = bytes; },
         "with --databases and --instances: the memory one search is counted as beside the "
         "folds under --mem-budget (default 4G; batch.json records what each search used)")
      ->transform(byte_size())
      ->type_name("SIZE");
}

// Which jobs are redone, their order, and --max-msa (the two MSA depths at once).
void add_batch_arguments(CLI::App& cmd, PredictArguments& args) {
  PredictOptions& o = args.options;
  cmd.add_flag("--overwrite-existing-results", o.overwrite_existing_results,
               "redo jobs whose JOB.done.txt exists (default: skip them)");
  cmd.add_option("--sort-queries-by", args.sort_queries_by,
                 "none, length (shortest first), msa_depth (deepest own A3M first) or random "
                 "(shuffled with --random-seed)")
      ->default_val("length");
  cmd.add_option("--max-msa", args.max_msa,
                 "MAX_SEQ:MAX_EXTRA_SEQ, e.g. 512:1024; overrides --max-seq and --max-extra-seq");
}

// When a job stops early, how jobs are named and which files they get; the progress output;
// colabfold_batch's other options.
void add_output_arguments(CLI::App& cmd, PredictArguments& args) {
  PredictOptions& o = args.options;
  cmd.add_option("--stop-at-score", o.stop_at_score,
                 "stop recycling, and skip the job's remaining models and seeds, once a "
                 "prediction's ranking score (mean pLDDT, or 100 x pTM with --rank ptm) "
                 "exceeds this")
      ->default_val(100)
      ->transform(real_in(0, 100));
  cmd.add_option("--jobname-prefix", o.jobname_prefix,
                 "name the jobs PREFIX_0, PREFIX_1, ... in run order instead of by their headers");
  cmd.add_flag("--save-all", o.save_all,
               "write every model output to JOB_all_rank_K_TAG.h5 (HDF5; ColabFold writes a "
               "pickle)");
  cmd.add_flag("--save-recycles", o.save_recycles,
               "write the structure of every recycle, JOB_unrelaxed_rank_K_TAG.rR.pdb");
  cmd.add_flag("--save-single-representations", o.save_single_representations,
               "write the single representation (the MSA's first row, [N_res, c_m]) to "
               "JOB_single_repr_rank_K_TAG.npy (f32)");
  cmd.add_flag("--save-pair-representations", o.save_pair_representations,
               "write the pair representation ([N_res, N_res, c_z]) to "
               "JOB_pair_repr_rank_K_TAG.npy (f32)");
  cmd.add_option("--skip-output", args.skip_output,
                 "comma-separated outputs not to write: msa (JOB.a3m), plots (PNG), pae_json");
  cmd.add_flag("--zip", o.zip,
               "put each job's files into JOB.result.zip and delete them (the zip marks the job "
               "done)");
  cmd.add_flag("--quiet", args.quiet,
               "no progress on stderr (log.txt still has it); failures are still reported");
  // Every other colabfold_batch option: accepted, or refused before any work.
  add_colabfold_options(cmd, args.colabfold);
  // Those without effect keep argparse's types (counts, finite numbers): what ColabFold
  // refuses is refused here too.
  for (const char* name : {"--max-template-hits", "--num-relax", "--relax-max-iterations",
                           "--relax-max-outer-iterations", "--recompile-padding"}) {
    cmd.get_option(name)->transform(integer_in(0, kMaxIgnoredCount));
  }
  for (const char* name : {"--relax-tolerance", "--relax-stiffness"}) {
    cmd.get_option(name)->transform(real_in(0, kMaxIgnoredReal));
  }
}

// Several instances per node (predict only): pipeline/batch/instance_batch.h.
void add_instance_arguments(CLI::App& cmd, PredictArguments& args) {
  PredictOptions& o = args.options;
  cmd.add_option("--instances", args.instances,
                 "worker processes folding jobs at once, each pinned to its own cores and "
                 "admitted when its planned peak fits --mem-budget beside the others (K or auto: "
                 "what the cores, the memory and the time model favour; with only --threads "
                 "given, 1)")
      ->capture_default_str();
  cmd.add_option("--threads-per-instance", o.threads_per_instance,
                 "OpenMP threads (cores) of each instance (default: chosen with --instances)")
      ->check(CLI::Range(1, 4096));
  cmd.add_option("--shard", args.shard,
                 "fold only share I of N of the jobs (1-based), split by predicted time; "
                 "default in a Slurm job array: SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT");
  cmd.add_option("--worker-job", o.worker_job)->group("");      // a batch's worker: one job
  cmd.add_flag("--worker-search", o.worker_search)->group("");  // ... that only searches
  // The worker's job's search time in the batch (timings.json), from its parent.
  cmd.add_option("--job-search-seconds", args.job_search_seconds)->group("");
}

// --instances, --threads-per-instance and --shard into the options.
void resolve_instance_arguments(PredictArguments& args) {
  PredictOptions& o = args.options;
  if (args.instances != "auto") {
    const std::string& k = args.instances;
    const bool digits =
        !k.empty() && k.size() < 5 && k.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(k) < 1) {
      throw InputError("--instances '" + k + "': expected a count of 1 or more, or auto");
    }
    o.instances = std::stoi(k);
  } else {
    o.instances = 0;
  }
  if (o.instances == 1 && o.threads_per_instance > 0) {
    o.threads = o.threads_per_instance;
    omp_set_num_threads(o.threads);  // this process is the one instance
  }
  if (!args.shard.empty()) o.shard = parse_shard(args.shard);
}

}  // namespace

void add_predict_arguments(CLI::App& cmd, PredictArguments& args, Command command) {
  add_model_arguments(cmd, args, /*output_dir_required=*/command == Command::predict);
  add_common_options(cmd, args.common, command);
  add_batch_arguments(cmd, args);
  add_output_arguments(cmd, args);
  if (command == Command::predict) {
    add_search_arguments(cmd, args);
    add_instance_arguments(cmd, args);
  }
}

void resolve_predict_arguments(PredictArguments& args) {
  PredictOptions& o = args.options;
  refuse_unsupported(args.colabfold);
  refuse_unsupported_value("--model-type", args.model_type);
  refuse_unsupported_value("--rank", args.rank);
  if (!args.max_msa.empty()) {
    const MaxMsa m = parse_max_msa(args.max_msa);
    args.max_seq = m.max_seq;
    args.max_extra_seq = m.max_extra_seq;
  }
  if (const auto mode = args.colabfold.value("--msa-mode")) {
    o.single_sequence = parse_msa_mode(*mode);
  }
  const SkipOutputs skip = parse_skip_output(args.skip_output);
  o.skip_msa = skip.msa;
  o.skip_plots = skip.plots;
  o.skip_pae_json = skip.pae_json;
  resolve_common_options(args.common, [&args](const std::string& line) {
    if (!args.quiet) std::cerr << line << "\n";
  });
  static_cast<SharedRunOptions&>(o) = args.common.run;
  o.model_order = parse_model_order("--model-order", args.model_order);
  // ColabFold sorts --model-order before taking the first --num-models (batch.py run()).
  std::sort(o.model_order.begin(), o.model_order.end());
  if (o.random_seed > static_cast<std::uint64_t>(kMaxRandomSeed - (o.num_seeds - 1))) {
    throw InputError("--random-seed " + std::to_string(o.random_seed) + " with --num-seeds " +
                     std::to_string(o.num_seeds) + " runs seeds past " +
                     std::to_string(kMaxRandomSeed) + ": lower one of them");
  }
  o.model_type = parse_model_type(args.model_type);
  o.rank = parse_rank_by(args.rank);
  o.sort_queries_by = parse_query_order(args.sort_queries_by);
  o.data_dir = args.data.empty() ? default_data_dir() : std::filesystem::path(args.data);
  if (!o.custom_template_path.empty()) o.templates = true;
  if (o.templates && o.template_db.empty()) o.template_db = o.databases;
  static const std::regex iso_date(R"(\d{4}-\d{2}-\d{2})");
  if (!std::regex_match(o.max_template_date, iso_date)) {
    throw InputError("--max-template-date '" + o.max_template_date +
                     "': expected a date as YYYY-MM-DD, like 2021-11-01");
  }
  if (args.max_seq > 0) o.max_seq = args.max_seq;
  if (args.max_extra_seq >= 0) o.max_extra_seq = args.max_extra_seq;
  // ColabFold: --amber without --num-relax relaxes every prediction.
  if (const auto n = args.colabfold.value("--num-relax")) o.num_relax = std::stoi(*n);
  if (args.colabfold.value("--amber") && o.num_relax == 0) o.num_relax = o.num_models * o.num_seeds;
  if (args.job_search_seconds >= 0 && !o.worker_job.empty()) {
    o.search_seconds[o.worker_job] = args.job_search_seconds;
  }
  resolve_instance_arguments(args);
}

}  // namespace cpufold
