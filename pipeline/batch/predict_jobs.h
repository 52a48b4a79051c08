// The jobs of a `cpufold predict` batch, discovered from its INPUT as colabfold_batch does:
// a FASTA file, an A3M file, a CSV/TSV table, or a directory of such files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "io/sequence_input.h"

namespace cpufold {

// One query to fold. A job with a non-empty `error` cannot run; the batch reports it and
// goes on with the others.
struct PredictJob {
  std::string name;              // file-safe job name: the prefix of every output file
  std::string sequence;          // the query, uppercase
  std::filesystem::path source;  // the input file it comes from
  std::size_t line = 0;          // 1-based line of its header / table row in `source`
  std::filesystem::path a3m;     // its own MSA (A3M input, table a3m_path); empty: none
  std::string error;             // "FILE:LINE: message" when the job cannot run
  // What `error` is when it is not the input's: its search program failed, or was killed for
  // memory (predict --databases); the exit status of the batch follows it.
  enum class ErrorKind { input, program, memory } error_kind = ErrorKind::input;
};

// length: shortest first; msa_depth: most rows in the job's own A3M first; random: shuffled
// (by reorder_jobs, with the batch's random seed).
enum class QueryOrder { none, length, msa_depth, random };

struct JobList {
  std::vector<PredictJob> jobs;
  std::vector<std::string> warnings;  // files skipped or records ignored, for the log
};

// Jobs of `input`:
// - FASTA (.fasta .fa .faa .fas, or any file that is not one of the others): one job per
//   record, named by the whole header line made file-safe (ColabFold's jobname);
// - A3M (.a3m): one job named by the file stem, the query is the first row and the file is
//   the job's MSA;
// - CSV / TSV (.csv .tsv): a header row naming the columns `id` and `sequence`, and
//   optionally `a3m_path` (ColabFold: `a3mpath`); relative paths are resolved against the
//   table's directory;
// - a directory: its FASTA, A3M, CSV and TSV files in name order; as in ColabFold a FASTA
//   file there is ONE job named by the file stem (its first record; more are ignored with a
//   warning). Other files are skipped with a warning.
// A bad record makes only its job fail (`error`); a file that cannot be read at all (empty,
// no header) yields one failed job named by the file stem. Names too long for file names are
// cut (fit_job_name, with a warning); `error` and `warnings` are made safe to print and to
// write to JSON (text::safe_text). InputError when INPUT does not
// exist, holds no job, or two jobs share a name (they would write the same files).
JobList discover_jobs(const std::filesystem::path& input, QueryOrder order,
                      std::size_t max_length = kDefaultMaxQueryLength);

// Longest job name whose output files (the longest suffix cpufold appends, see
// longest_job_file_suffix) still fit NAME_MAX.
std::size_t max_job_name_bytes();

// Cuts a job name longer than max_job_name_bytes() on a character boundary and appends "_"
// and 8 hex digits of a hash of the whole name, so that two long names sharing a prefix stay
// distinct; says so in `warnings`. discover_jobs does this for every job.
void fit_job_name(PredictJob& job, std::vector<std::string>& warnings);

// "none", "length", "msa_depth" or "random"; InputError otherwise.
QueryOrder parse_query_order(const std::string& name);

}  // namespace cpufold
