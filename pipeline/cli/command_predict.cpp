// `cpufold predict INPUT OUTPUT_DIR`: the batch folding users run, with colabfold_batch's
// arguments, defaults and output file names.

#include <iostream>
#include <memory>

#include "memory/error.h"
#include "pipeline/batch/predict.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/colabfold_options.h"
#include "pipeline/cli/common_options.h"
#include "pipeline/cli/option_checks.h"

namespace cpufold {
namespace {

constexpr const char* kPredictManual = R"(
INPUT (as colabfold_batch)
  FASTA file (.fasta .fa .faa .fas; any other file is read as FASTA)
      One job per record, named by the whole header line with every character
      outside [A-Za-z0-9_.-] replaced by '_' (ColabFold's job names); a name
      over 150 bytes is cut and ends in '_' and 8 hex digits of its hash (the
      log says so). Wrapped lines, lowercase, LF / CRLF / CR line ends and a
      UTF-8 byte-order mark are accepted (in every input format); B J O U Z X
      are folded as unknown residues, but a query of only unknown residues
      fails (AF2 builds no atoms for them). A ':' (complex) fails that job:
      multimer not supported yet.
  A3M file (.a3m)
      One job named by the file stem; its first row is the query and the file
      is the job's MSA.
  CSV / TSV file (.csv .tsv)
      A header row with the columns id, sequence and optionally a3m_path
      (ColabFold's a3mpath is accepted too); relative paths are resolved
      against the table's directory. Fields may be quoted ("a,b", "" for a
      quote); a row with an unbalanced or stray quote, or an empty id, fails
      with FILE:LINE.
  directory
      Its FASTA, A3M, CSV and TSV files in name order. As in ColabFold, a FASTA
      file in a directory is ONE job named by the file stem (its first record).
  Jobs are folded shortest first (--sort-queries-by length). A job with a bad
  record (empty sequence, invalid letter, too long, ':') is reported with
  FILE:LINE and fails alone; the other jobs still run. Two jobs with the same
  name are refused before anything runs.

MSAs
  A job's own A3M (A3M input or a3m_path) is its MSA. Otherwise --msa-dir DIR
  is searched for, in this order:
    DIR/JOB.a3m or DIR/JOB.sto           ColabFold / colabfold_search output
    DIR/JOB/msas/                        AlphaFold2's output directory
    DIR/JOB/                             the same files without msas/
    DIR/alignments/JOB/                  OpenFold's precomputed alignments
  A directory contributes uniref90_hits.sto, bfd_uniref_hits.a3m (or
  bfd_uniclust_hits.a3m, small_bfd_hits.sto) and mgnify_hits.sto (.a3m
  variants accepted), concatenated in that order as AlphaFold2 does and read
  up to AF2's limits (uniref90 10000 rows, mgnify 501), then any other *.a3m /
  *.sto in name order; pdb_hits, hmm_output and uniprot_hits are skipped.
  Duplicate rows are removed. The first row of every MSA must be the query.
  Without an MSA a job runs in single-sequence mode and says so (expect low
  confidence).

PARAMETERS
  --data DIR holds params/params_model_N_ptm.npz (alphafold2_ptm, the default)
  or params/params_model_N.npz (alphafold2), as AlphaFold2 and ColabFold lay
  them out; a .h5 copy made with `cpufold convert-params` is preferred when
  present (memory-mapped, shared between processes). Default: $CPUFOLD_DATA,
  else ColabFold's download directory ~/.cache/colabfold. The weights are
  DeepMind's alphafold_params_2022-12-06.tar (CC BY 4.0):
  https://storage.googleapis.com/alphafold/alphafold_params_2022-12-06.tar
  Each model is loaded once per batch (when memory allows, all stay loaded).

OUTPUT_DIR (per job JOB, K = rank 001.., M = model, SSS = seed)
  JOB_unrelaxed_rank_K_alphafold2_ptm_model_M_seed_SSS.pdb   pLDDT as B-factor
  JOB_unrelaxed_rank_K_alphafold2_ptm_model_M_seed_SSS.cif   ModelCIF pLDDT
  JOB_scores_rank_K_alphafold2_ptm_model_M_seed_SSS.json     plddt, pae, max_pae, ptm
  JOB_predicted_aligned_error_v1.json   rank 1, AlphaFold DB format (ptm models)
  JOB_plddt.png, JOB_pae.png            plots of the top 5 ranks
  JOB_coverage.png                      MSA coverage, rows coloured by identity
  JOB.a3m                               the MSA the job used
  JOB.done.txt                          written last: the job is complete
  config.json (options used), cite.bibtex (AlphaFold2, ColabFold), log.txt
  (progress, appended), timings.json (seconds per job, model and stage; peak
  memory). With --save-recycles also JOB_unrelaxed_rank_K_..._seed_SSS.rR.pdb
  per recycle R; with --save-all JOB_all_rank_K_..._seed_SSS.h5 (every model
  output, HDF5); with --zip only JOB.result.zip, which then marks the job done.
  Rank 1 has the highest mean pLDDT (--rank plddt, the default) or pTM
  (--rank ptm). Every file is written to a temporary name and renamed, so a
  killed run leaves no half-written file; a rerun skips jobs whose .done.txt
  exists (unless --overwrite-existing-results) and redoes the others.

COLABFOLD_BATCH OPTIONS
  Every colabfold_batch option is accepted. Those cpufold cannot honour yet
  (--templates, --amber, --msa-mode mmseqs2_*, multimer model types,
  --use-dropout, ...) stop the run before any work with
  exit status 2 and what to do instead; options for GPUs, the MSA server,
  complexes or relaxation settings are accepted and have no effect. README's
  table lists each option and its status.

)";

// After the common EXIT STATUS table (kExitStatusHelp).
constexpr const char* kPredictManualEnd =
    R"(  A job that fails for a reason of its own (bad record, MSA that does not
  match its query, out of memory, NaN or Inf in its outputs) fails alone: the
  other jobs are folded, the summary and log.txt list each failure (--quiet
  too), and the status is 2, or 4 when every failed job ran out of memory
  (raise the limit or use --chunk-size). Parameters holding NaN or Inf stop
  the batch (3). An error that stops the batch (options, parameters,
  OUTPUT_DIR) is also appended to OUTPUT_DIR/log.txt when that directory
  exists.

EXAMPLE
  cpufold predict data/examples/proteins.fasta out --msa-dir msas --data ~/af2
  cpufold predict data/examples/tautomerase.a3m out --num-models 1 --num-recycle 1
)";

}  // namespace

void add_predict_command(CLI::App& app) {
  struct Args {
    PredictOptions options;
    std::string model_order = "1,2,3,4,5";
    std::string model_type = "auto";
    std::string rank = "auto";
    std::string sort_queries_by = "length";
    std::string data;
    std::int64_t max_seq = 0, max_extra_seq = -1;
    std::string max_msa, skip_output;
    bool quiet = false;
    ColabfoldValues colabfold;
    CommonOptions common;
  };
  auto args = std::make_shared<Args>();
  PredictOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Fold every query of INPUT with AlphaFold2 and write ranked structures, scores and plots "
      "to OUTPUT_DIR, following colabfold_batch's conventions (same arguments, defaults and "
      "file names).");
  cmd->footer(std::string(kPredictManual) + kExitStatusHelp + kPredictManualEnd);
  cmd->add_option("INPUT", o.input, "FASTA, A3M, CSV/TSV file or a directory of them")->required();
  cmd->add_option("OUTPUT_DIR", o.output_dir, "results directory (created when missing)")
      ->required();

  cmd->add_option("--msa-dir", o.msa_dir,
                  "precomputed MSAs per job (layouts below); default: single-sequence mode for "
                  "jobs without an A3M");
  cmd->add_option("--data", args->data,
                  "directory holding params/params_model_N[_ptm].{npz,h5} (default: "
                  "$CPUFOLD_DATA, else ~/.cache/colabfold)");
  cmd->add_option("--num-models", o.num_models, "number of models to run, from --model-order")
      ->default_val(5)
      ->transform(integer_in(1, 5));
  cmd->add_option("--model-order", args->model_order,
                  "AlphaFold2 models in the order they are tried (the first --num-models run)")
      ->default_val("1,2,3,4,5")
      ->check(model_order_list());
  cmd->add_option("--model-type", args->model_type,
                  "auto (= alphafold2_ptm), alphafold2_ptm or alphafold2")
      ->default_val("auto");
  cmd->add_option("--num-recycle", o.num_recycle, "recycling iterations after the first pass")
      ->default_val(3)
      ->transform(integer_in(0, kMaxRecycles));
  cmd->add_option("--recycle-early-stop-tolerance", o.recycle_early_stop_tolerance,
                  "stop recycling once the CA-CA distances change by less than this (RMS, "
                  "Angstrom); 0: off")
      ->transform(real_in(0, kMaxEarlyStopTolerance));
  cmd->add_option("--num-ensemble", o.num_ensemble,
                  "AF2 ensembling: trunk passes per recycle, each on its own MSA sample, "
                  "representations averaged (costs N times the trunk)")
      ->default_val(1)
      ->transform(integer_in(1, kMaxEnsemble));
  cmd->add_option("--num-seeds", o.num_seeds,
                  "seeds per model: random_seed .. random_seed + num_seeds - 1")
      ->default_val(1)
      ->transform(integer_in(1, kMaxSeeds));
  cmd->add_option("--random-seed", o.random_seed,
                  "seed of the MSA sampling and masking (reproducible on every machine)")
      ->default_val(0)
      ->transform(integer_in(0, kMaxRandomSeed));
  cmd->add_option("--rank", args->rank,
                  "rank predictions by auto (= plddt for monomers), plddt (mean pLDDT) or ptm")
      ->default_val("auto");
  cmd->add_option("--max-seq", args->max_seq,
                  "MSA cluster rows fed to the Evoformer (default: AF2's, 512 or 508 with "
                  "template models)")
      ->transform(integer_in(1, kMaxRows));
  cmd->add_option("--max-extra-seq", args->max_extra_seq,
                  "extra MSA rows (default: AF2's, 5120 for models 1, 3, 4 and 1024 for 2, 5)")
      ->transform(integer_in(0, kMaxRows));
  add_common_options(*cmd, args->common, {CommonOption::threads, CommonOption::chunk_size});
  cmd->add_flag("--overwrite-existing-results", o.overwrite_existing_results,
                "redo jobs whose JOB.done.txt exists (default: skip them)");
  cmd->add_option("--sort-queries-by", args->sort_queries_by,
                  "none, length (shortest first), msa_depth (deepest own A3M first) or random "
                  "(shuffled with --random-seed)")
      ->default_val("length");
  cmd->add_option("--max-msa", args->max_msa,
                  "MAX_SEQ:MAX_EXTRA_SEQ, e.g. 512:1024; overrides --max-seq and --max-extra-seq");
  cmd->add_option("--stop-at-score", o.stop_at_score,
                  "stop recycling, and skip the job's remaining models and seeds, once a "
                  "prediction's ranking score (mean pLDDT, or 100 x pTM with --rank ptm) "
                  "exceeds this")
      ->default_val(100)
      ->transform(real_in(0, 100));
  cmd->add_option("--jobname-prefix", o.jobname_prefix,
                  "name the jobs PREFIX_0, PREFIX_1, ... in run order instead of by their headers");
  cmd->add_flag("--save-all", o.save_all,
                "write every model output to JOB_all_rank_K_TAG.h5 (HDF5; ColabFold writes a "
                "pickle)");
  cmd->add_flag("--save-recycles", o.save_recycles,
                "write the structure of every recycle, JOB_unrelaxed_rank_K_TAG.rR.pdb");
  cmd->add_flag("--save-single-representations", o.save_single_representations,
                "write the single representation (the MSA's first row, [N_res, c_m]) to "
                "JOB_single_repr_rank_K_TAG.npy (f32)");
  cmd->add_flag("--save-pair-representations", o.save_pair_representations,
                "write the pair representation ([N_res, N_res, c_z]) to "
                "JOB_pair_repr_rank_K_TAG.npy (f32)");
  cmd->add_option("--skip-output", args->skip_output,
                  "comma-separated outputs not to write: msa (JOB.a3m), plots (PNG), pae_json");
  cmd->add_flag("--zip", o.zip,
                "put each job's files into JOB.result.zip and delete them (the zip marks the job "
                "done)");
  cmd->add_flag("--quiet", args->quiet,
                "no progress on stderr (log.txt still has it); failures are still reported");
  // Every other colabfold_batch option: accepted, or refused before any work.
  add_colabfold_options(*cmd, args->colabfold);
  // Those without effect keep argparse's types (counts, finite numbers): what ColabFold
  // refuses is refused here too.
  for (const char* name : {"--max-template-hits", "--num-relax", "--relax-max-iterations",
                           "--relax-max-outer-iterations", "--recompile-padding"}) {
    cmd->get_option(name)->transform(integer_in(0, kMaxIgnoredCount));
  }
  for (const char* name : {"--relax-tolerance", "--relax-stiffness"}) {
    cmd->get_option(name)->transform(real_in(0, kMaxIgnoredReal));
  }

  cmd->callback([args] {
    PredictOptions& o = args->options;
    refuse_unsupported(args->colabfold);
    refuse_unsupported_value("--model-type", args->model_type);
    refuse_unsupported_value("--rank", args->rank);
    if (!args->max_msa.empty()) {
      const MaxMsa m = parse_max_msa(args->max_msa);
      args->max_seq = m.max_seq;
      args->max_extra_seq = m.max_extra_seq;
    }
    const SkipOutputs skip = parse_skip_output(args->skip_output);
    o.skip_msa = skip.msa;
    o.skip_plots = skip.plots;
    o.skip_pae_json = skip.pae_json;
    apply_common_options(args->common);
    o.threads = args->common.threads;
    o.chunk_size = args->common.chunk_size;
    o.model_order = parse_model_order("--model-order", args->model_order);
    if (o.random_seed > static_cast<std::uint64_t>(kMaxRandomSeed - (o.num_seeds - 1))) {
      throw InputError("--random-seed " + std::to_string(o.random_seed) + " with --num-seeds " +
                       std::to_string(o.num_seeds) + " runs seeds past " +
                       std::to_string(kMaxRandomSeed) + ": lower one of them");
    }
    o.model_type = parse_model_type(args->model_type);
    o.rank = parse_rank_by(args->rank);
    o.sort_queries_by = parse_query_order(args->sort_queries_by);
    o.data_dir = args->data.empty() ? default_data_dir() : std::filesystem::path(args->data);
    if (args->max_seq > 0) o.max_seq = args->max_seq;
    if (args->max_extra_seq >= 0) o.max_extra_seq = args->max_extra_seq;
    if (!args->quiet) o.progress = [](const std::string& line) { std::cerr << line << "\n"; };

    const PredictSummary summary = predict(o);
    // predict() has printed the summary (done, skipped, each failure) on progress and log.txt;
    // --quiet hides progress, never failures.
    const std::size_t failed = summary.count(JobOutcome::Status::failed);
    if (failed == 0) return;
    std::size_t memory_failures = 0;
    for (const JobOutcome& job : summary.jobs) {
      if (job.status != JobOutcome::Status::failed) continue;
      if (args->quiet) std::cerr << "failed " << job.name << ": " << job.message << "\n";
      if (job.out_of_memory) ++memory_failures;
    }
    const std::string of = std::to_string(failed) + " of " + std::to_string(summary.jobs.size());
    const std::string where = " (listed above and in " + (o.output_dir / "log.txt").string() + ")";
    if (memory_failures == failed) throw BudgetError(of + " job(s) ran out of memory" + where);
    throw InputError(of + " job(s) failed" + where);
  });
}

}  // namespace cpufold
