// `cpufold predict INPUT OUTPUT_DIR`: the batch folding users run, with colabfold_batch's
// arguments, defaults and output file names.

#include <csignal>
#include <iostream>
#include <memory>

#include "memory/error.h"
#include "pipeline/batch/predict.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/predict_arguments.h"
#include "pipeline/search/external_program.h"

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
  MMseqs2 / ColabFold A3M (NUL byte before each '>') is read.
  cpufold queries no MSA server: when a job has neither its own A3M nor
  --msa-dir, the batch is refused before any work (exit 2) unless
  --msa-mode single_sequence asks to fold such jobs from the query alone
  (expect low confidence). A --msa-dir without the job's MSA fails that job
  alone (or, with --msa-mode single_sequence, folds it from the query). The
  log and each scores JSON ("msa") state the job's MSA source and depth.

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

INSTANCES
  --instances auto (the default) folds several jobs at once when the time
  model says that is faster: each job in a worker process pinned to its own
  cores, started when its planned peak fits beside the running jobs' under
  --mem-budget (default: the cgroup limit or MemAvailable), longest first. A
  worker that dies is retried once alone with its leanest plan; SIGINT or
  SIGTERM stops the workers and a rerun resumes. OUTPUT_DIR then also holds
  batch.json (per job: instance, cores, start/end, predicted and measured
  peak, plan) and logs/JOB.log.txt. --threads N alone, or --instances 1,
  folds in this process. --shard I/N (or a Slurm array task) folds share I.

COLABFOLD_BATCH OPTIONS
  Every colabfold_batch option is accepted. Those cpufold cannot honour yet
  (--templates, --msa-only, multimer model types, --use-dropout, ...) stop
  the run before any work with exit status 2 and what to do instead; options
  for GPUs, the MSA server, complexes or relaxation settings are accepted and
  have no effect. --amber / --num-relax N are accepted with one warning:
  structures are written unrelaxed (ColabFold's unrelaxed names). As in
  ColabFold, --model-order is sorted before the first --num-models are taken,
  and every model uses 512 cluster and 5120 extra MSA rows unless --max-seq,
  --max-extra-seq or --max-msa say otherwise. README's table lists each
  option and its status.

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
  auto args = std::make_shared<PredictArguments>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Fold every query of INPUT with AlphaFold2 and write ranked structures, scores and plots "
      "to OUTPUT_DIR, following colabfold_batch's conventions (same arguments, defaults and "
      "file names).");
  cmd->footer(std::string(kPredictManual) + kExitStatusHelp + kPredictManualEnd);
  add_predict_arguments(*cmd, *args, Command::predict);
  cmd->callback([args] {
    resolve_predict_arguments(*args);
    PredictOptions& o = args->options;
    if (!args->quiet) o.progress = [](const std::string& line) { std::cerr << line << "\n"; };

    const PredictSummary summary = predict(o);
    if (summary.stopped_by_signal != 0) {
      // Stopped by SIGINT / SIGTERM: end as the signal would have, once the log is written.
      std::signal(summary.stopped_by_signal, SIG_DFL);
      std::raise(summary.stopped_by_signal);
    }
    // predict() has printed the summary (done, skipped, each failure) on progress and log.txt;
    // --quiet hides progress, never failures.
    const std::size_t failed = summary.count(JobOutcome::Status::failed);
    if (failed == 0) return;
    std::size_t memory_failures = 0, program_failures = 0;
    for (const JobOutcome& job : summary.failures) {
      if (args->quiet) std::cerr << "failed " << job.name << ": " << job.message << "\n";
      if (job.out_of_memory) ++memory_failures;
      if (job.program_failed) ++program_failures;
    }
    const std::string of = std::to_string(failed) + " of " + std::to_string(summary.total());
    const std::string where = " (listed above and in " + (o.output_dir / "log.txt").string() + ")";
    if (memory_failures == failed) throw BudgetError(of + " job(s) ran out of memory" + where);
    if (program_failures == failed) {
      throw ExternalProgramError(of + " job(s) failed in their search" + where);
    }
    throw InputError(of + " job(s) failed" + where);
  });
}

}  // namespace cpufold
