#include "pipeline/batch/predict_jobs.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <map>

#include "io/a3m.h"
#include "io/delimited_table.h"
#include "io/text_input.h"
#include "io/text_safety.h"
#include "memory/error.h"
#include "pipeline/output/job_outputs.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using text::located;
using text::trim;

enum class InputKind { fasta, a3m, table, other };

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

InputKind kind_of(const fs::path& file) {
  const std::string ext = lower(file.extension().string());
  if (ext == ".a3m") return InputKind::a3m;
  if (ext == ".csv" || ext == ".tsv") return InputKind::table;
  if (ext == ".fasta" || ext == ".fa" || ext == ".faa" || ext == ".fas") return InputKind::fasta;
  return InputKind::other;
}

// The job of a file that cannot be read at all.
PredictJob failed_file(const fs::path& file, const std::string& message) {
  PredictJob job;
  job.name = job_name(file.stem().string());
  job.source = file;
  job.error = message;
  return job;
}

// Validates the query of `job` (record-level errors stay on the job).
void check_query(PredictJob& job, const std::string& id, std::size_t max_length) {
  SequenceRecord record;
  record.id = id;
  record.sequence = job.sequence;
  record.line = job.line;
  if (auto error = query_error(record, max_length)) {
    job.error = located(job.source.string(), job.line, *error);
  }
}

// A failed job with no usable name still needs a unique one for the report.
void name_unnamed(PredictJob& job) {
  if (job.name.empty()) {
    job.name = job_name(job.source.stem().string()) + "_line_" + std::to_string(job.line);
  }
}

void add_fasta(const fs::path& file, bool one_job_per_file, std::size_t max_length, JobList& out) {
  std::vector<SequenceRecord> records;
  try {
    records = parse_fasta(read_input_text(file), file.string());
  } catch (const InputError& e) {
    out.jobs.push_back(failed_file(file, e.what()));
    return;
  }
  if (one_job_per_file && records.size() > 1) {
    out.warnings.push_back(file.string() + ": " + std::to_string(records.size() - 1) +
                           " more record(s) ignored: a FASTA file in an input directory is one "
                           "job named after the file (as in ColabFold)");
    records.resize(1);
  }
  for (const SequenceRecord& record : records) {
    PredictJob job;
    job.source = file;
    job.line = record.line;
    job.sequence = record.sequence;
    if (one_job_per_file) {
      job.name = job_name(file.stem().string());
    } else {
      // ColabFold names the job after the whole header line, not only its first word.
      job.name = job_name(record.header);
    }
    check_query(job, record.id, max_length);
    name_unnamed(job);
    out.jobs.push_back(std::move(job));
  }
}

void add_a3m(const fs::path& file, std::size_t max_length, JobList& out) {
  PredictJob job;
  job.name = job_name(file.stem().string());
  job.source = file;
  job.a3m = file;
  try {
    const std::string text = read_input_text(file);
    const Msa msa = parse_a3m(text, file.string());
    job.sequence = msa.sequences.front();
    text::Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
      if (!trim(line).empty() && trim(line).front() == '>') {
        job.line = lines.number();
        break;
      }
    }
    std::string id = msa.descriptions.front();
    id = id.substr(0, id.find_first_of(" \t"));
    check_query(job, id.empty() ? job.name : id, max_length);
  } catch (const InputError& e) {
    job.error = e.what();
  }
  out.jobs.push_back(std::move(job));
}

// The table's columns by name (-1: absent), case-insensitive.
struct TableColumns {
  std::ptrdiff_t id = -1, sequence = -1, a3m = -1;
};

TableColumns table_columns(const std::vector<std::string>& header) {
  auto column = [&](std::initializer_list<const char*> names) -> std::ptrdiff_t {
    for (std::size_t i = 0; i < header.size(); ++i) {
      for (const char* name : names) {
        if (lower(header[i]) == name) return static_cast<std::ptrdiff_t>(i);
      }
    }
    return -1;
  };
  return {column({"id"}), column({"sequence"}), column({"a3m_path", "a3mpath"})};
}

std::string missing_columns_error(const Table& table, const std::string& source, char delimiter) {
  const std::string sep = delimiter == '\t' ? "tab" : "comma";
  std::string found;
  for (const std::string& h : table.header) found += (found.empty() ? "" : ", ") + ("'" + h + "'");
  return located(source, table.header_line,
                 "the first row must name the columns 'id' and 'sequence' (and optionally "
                 "'a3m_path'), " +
                     sep + "-separated; found " + text::excerpt(found, 200));
}

// The job of one table row; its error says what is wrong with the row.
PredictJob table_job(const fs::path& file, const TableRow& row, const TableColumns& columns,
                     std::size_t header_size, std::size_t max_length) {
  const std::string source = file.string();
  PredictJob job;
  job.source = file;
  job.line = row.line;
  auto field = [&](std::ptrdiff_t col) {
    return col >= 0 && static_cast<std::size_t>(col) < row.fields.size() ? row.fields[col]
                                                                         : std::string();
  };
  const std::string id = field(columns.id);
  job.name = job_name(id);
  for (char c : field(columns.sequence)) {
    if (!text::is_space(c))
      job.sequence += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (!row.error.empty()) {
    job.error = row.error;
  } else if (row.fields.size() != header_size) {
    job.error = located(source, job.line,
                        "row has " + std::to_string(row.fields.size()) +
                            " field(s) but the header " + std::to_string(header_size));
  } else if (trim(id).empty()) {
    job.error = located(source, job.line,
                        "the 'id' field is empty; every row needs an id (it names the job "
                        "and its output files)");
  } else {
    check_query(job, id, max_length);
  }
  const std::string a3m = field(columns.a3m);
  if (!a3m.empty()) {
    job.a3m = fs::path(a3m).is_absolute() ? fs::path(a3m) : file.parent_path() / a3m;
    std::error_code ec;
    const bool found = fs::is_regular_file(job.a3m, ec);
    if (job.error.empty() && !found) {
      job.error = located(
          source, job.line,
          "a3m_path " + job.a3m.string() +
              (ec && ec != std::errc::no_such_file_or_directory ? " cannot be used: " + ec.message()
                                                                : " does not exist"));
    }
  }
  name_unnamed(job);
  return job;
}

void add_table(const fs::path& file, std::size_t max_length, JobList& out) {
  const char delimiter = lower(file.extension().string()) == ".tsv" ? '\t' : ',';
  const std::string source = file.string();
  Table table;
  try {
    table = parse_table(read_input_text(file), source, delimiter);
  } catch (const InputError& e) {
    out.jobs.push_back(failed_file(file, e.what()));
    return;
  }
  const TableColumns columns = table_columns(table.header);
  if (columns.id < 0 || columns.sequence < 0) {
    out.jobs.push_back(failed_file(file, missing_columns_error(table, source, delimiter)));
    return;
  }
  for (const TableRow& row : table.rows) {
    out.jobs.push_back(table_job(file, row, columns, table.header.size(), max_length));
  }
  if (table.rows.empty()) {
    out.jobs.push_back(
        failed_file(file, located(source, table.header_line, "table has a header but no rows")));
  }
}

// Why a directory entry that is not a regular file is skipped; "" for a subdirectory, which
// is skipped without a word (as by ColabFold).
std::string why_not_a_file(const fs::directory_entry& entry) {
  std::error_code ec;
  if (entry.is_symlink(ec)) {
    const fs::path target = fs::read_symlink(entry.path(), ec);
    std::error_code target_ec;
    if (!fs::exists(entry.path(), target_ec))
      return "a symbolic link to " + target.string() + ", which does not exist";
  }
  if (entry.is_directory(ec)) return "";
  return "not a regular file";
}

void add_file(const fs::path& file, bool in_directory, std::size_t max_length, JobList& out) {
  switch (kind_of(file)) {
    case InputKind::a3m:
      add_a3m(file, max_length, out);
      break;
    case InputKind::table:
      add_table(file, max_length, out);
      break;
    case InputKind::fasta:
      add_fasta(file, in_directory, max_length, out);
      break;
    case InputKind::other:
      if (in_directory) {
        out.warnings.push_back(file.string() +
                               ": skipped (not .fasta/.fa/.faa/.fas, .a3m, .csv or .tsv)");
      } else {
        add_fasta(file, false, max_length, out);
      }
      break;
  }
}

}  // namespace

std::size_t max_job_name_bytes() {
  return NAME_MAX - longest_job_file_suffix();
}

void fit_job_name(PredictJob& job, std::vector<std::string>& warnings) {
  const std::size_t limit = max_job_name_bytes();
  if (job.name.size() <= limit) return;
  // A fingerprint of the whole name keeps two long names that share a prefix apart.
  char hash[24];
  std::snprintf(hash, sizeof hash, "_%08llx",
                static_cast<unsigned long long>(text::fnv1a64(job.name) & 0xffffffffULL));
  const std::string full = job.name;
  job.name = std::string(text::utf8_prefix(full, limit - std::string_view(hash).size())) + hash;
  warnings.push_back(job.source.string() + (job.line > 0 ? ":" + std::to_string(job.line) : "") +
                     ": job name of " + std::to_string(full.size()) + " characters cut to '" +
                     job.name + "' (" + std::to_string(limit) +
                     " at most, so that every output file name fits the file system's " +
                     std::to_string(NAME_MAX) + "-byte limit)");
}

QueryOrder parse_query_order(const std::string& name) {
  if (name == "none") return QueryOrder::none;
  if (name == "length") return QueryOrder::length;
  if (name == "msa_depth") return QueryOrder::msa_depth;
  if (name == "random") return QueryOrder::random;
  throw InputError("--sort-queries-by must be none, length, msa_depth or random, not '" + name +
                   "'");
}

JobList discover_jobs(const fs::path& input, QueryOrder order, std::size_t max_length) {
  JobList out;
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    std::vector<fs::path> files;
    std::vector<std::pair<fs::path, std::string>> skipped;
    fs::directory_iterator it(input, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || name.front() == '.') continue;
      std::error_code type_ec;
      if (it->is_regular_file(type_ec)) {
        files.push_back(it->path());
      } else if (std::string why = why_not_a_file(*it); !why.empty()) {
        skipped.emplace_back(it->path(), std::move(why));
      }
    }
    if (ec) throw InputError(input.string() + ": cannot list the directory: " + ec.message());
    std::sort(files.begin(), files.end());
    std::sort(skipped.begin(), skipped.end());
    for (const auto& [path, why] : skipped)
      out.warnings.push_back(path.string() + ": skipped (" + why + ")");
    for (const fs::path& file : files) add_file(file, true, max_length, out);
  } else if (fs::exists(input, ec)) {
    add_file(input, false, max_length, out);
  } else {
    throw InputError(input.string() +
                     ": no such file or directory (INPUT is a FASTA, A3M, CSV or TSV file or a "
                     "directory of them)");
  }
  if (out.jobs.empty()) {
    throw InputError(input.string() + ": no FASTA, A3M, CSV or TSV input found");
  }
  for (PredictJob& job : out.jobs) {
    fit_job_name(job, out.warnings);
    // Messages quote the input verbatim; they go to logs, JSON and the terminal.
    job.error = text::safe_text(job.error);
  }
  for (std::string& warning : out.warnings) warning = text::safe_text(warning);

  std::map<std::string, const PredictJob*> seen;
  for (const PredictJob& job : out.jobs) {
    auto [it, inserted] = seen.emplace(job.name, &job);
    if (!inserted) {
      const auto where = [](const PredictJob& j) {
        return j.source.string() + (j.line > 0 ? ":" + std::to_string(j.line) : "");
      };
      throw InputError("two jobs are named '" + job.name + "' (" + where(*it->second) + " and " +
                       where(job) +
                       "); job names name the output files and must be unique: rename one "
                       "header (every character outside [A-Za-z0-9_.-] counts as '_')");
    }
  }
  if (order == QueryOrder::length) {
    std::stable_sort(out.jobs.begin(), out.jobs.end(),
                     [](const PredictJob& a, const PredictJob& b) {
                       return a.sequence.size() < b.sequence.size();
                     });
  }
  return out;
}

}  // namespace cpufold
