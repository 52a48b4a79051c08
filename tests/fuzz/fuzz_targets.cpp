#include "tests/fuzz/fuzz_targets.h"

#include <climits>
#include <exception>
#include <functional>
#include <set>
#include <typeinfo>

#include "io/a3m.h"
#include "io/delimited_table.h"
#include "io/sequence_input.h"
#include "io/stockholm.h"
#include "io/text_safety.h"
#include "memory/error.h"
#include "pipeline/batch/predict_jobs.h"

namespace cpufold::fuzz {
namespace {

// Collects the findings of one input.
class Checker {
 public:
  explicit Checker(std::vector<Finding>& out) : out_(out) {}

  // Runs `fn`; an InputError must name `source` and a line ("SOURCE:LINE: ...") when
  // `source` is given.
  void run(const std::string& target, const std::string& source, const std::function<void()>& fn) {
    target_ = target;
    try {
      fn();
    } catch (const InputError& e) {
      const std::string message = e.what();
      if (message.empty()) fail("InputError with an empty message");
      if (!source.empty() && message.rfind(source + ":", 0) != 0) {
        fail("InputError not located in " + source + ": " + text::safe_text(message));
      }
    } catch (const std::exception& e) {
      fail(std::string("threw ") + typeid(e).name() + ": " + text::safe_text(e.what()));
    } catch (...) {
      fail("threw something that is not a std::exception");
    }
  }

  void expect(bool ok, const std::string& what) {
    if (!ok) fail(what);
  }

 private:
  void fail(const std::string& what) { out_.push_back({target_, what}); }

  std::vector<Finding>& out_;
  std::string target_;
};

bool is_safe(const std::string& s) {
  return text::safe_text(s) == s;
}

bool is_query_alphabet(const std::string& s) {
  for (char c : s) {
    if (c < 'A' || c > 'Z') return false;
  }
  return !s.empty();
}

void check_msa(Checker& check, const Msa& msa) {
  const std::size_t n = msa.sequences.size();
  check.expect(n > 0, "MSA without rows");
  check.expect(msa.deletions.size() == n && msa.descriptions.size() == n,
               "MSA rows, deletion rows and descriptions differ in number");
  if (n == 0 || msa.deletions.size() != n) return;
  const std::size_t n_res = msa.sequences[0].size();
  check.expect(n_res > 0, "MSA query without columns");
  for (std::size_t i = 0; i < n; ++i) {
    check.expect(msa.sequences[i].size() == n_res, "MSA row " + std::to_string(i) + " has " +
                                                       std::to_string(msa.sequences[i].size()) +
                                                       " columns, the query " +
                                                       std::to_string(n_res));
    check.expect(msa.deletions[i].size() == msa.sequences[i].size(),
                 "MSA row " + std::to_string(i) + ": deletions and columns differ");
    for (char c : msa.sequences[i]) {
      if (!((c >= 'A' && c <= 'Z') || c == '-')) {
        check.expect(false, "MSA row " + std::to_string(i) + " holds byte " +
                                std::to_string(static_cast<unsigned char>(c)));
        break;
      }
    }
    for (std::int32_t d : msa.deletions[i]) {
      if (d < 0) {
        check.expect(false, "negative deletion count");
        break;
      }
    }
  }
}

void check_fasta(Checker& check, std::string_view bytes) {
  const std::string source = "fuzz.fasta";
  check.run("fasta", source, [&] {
    const std::vector<SequenceRecord> records = parse_fasta(bytes, source);
    std::size_t last_line = 0;
    for (const SequenceRecord& r : records) {
      check.expect(r.line > last_line, "record lines do not increase");
      last_line = r.line;
      check.expect(r.header.find_first_of("\r\n") == std::string::npos, "line end in a header");
      for (char c : r.sequence) {
        if ((c >= 'a' && c <= 'z') || c == ' ' || c == '\r' || c == '\n' || c == '\t') {
          check.expect(false, "sequence keeps lowercase or whitespace");
          break;
        }
      }
      const std::optional<std::string> error = query_error(r);
      if (!error) {
        check.expect(is_query_alphabet(r.sequence), "accepted query outside A-Z");
        check.expect(r.sequence.find_first_of("ACDEFGHIKLMNPQRSTVWY") != std::string::npos,
                     "accepted query of only unknown residues");
      } else {
        check.expect(!error->empty(), "empty query error");
      }
    }
  });
}

void check_table(Checker& check, std::string_view bytes, char delimiter) {
  const std::string name = delimiter == '\t' ? "tsv" : "csv";
  const std::string source = "fuzz." + name;
  check.run(name, source, [&] {
    const Table table = parse_table(bytes, source, delimiter);
    check.expect(table.header_line > 0, "table without a header line");
    std::size_t last = table.header_line;
    for (const TableRow& row : table.rows) {
      check.expect(row.line > last, "table row lines do not increase");
      last = row.line;
      if (!row.error.empty()) {
        check.expect(row.fields.empty(), "a failed row keeps fields");
        check.expect(row.error.rfind(source + ":" + std::to_string(row.line) + ": ", 0) == 0,
                     "row error without FILE:LINE: " + text::safe_text(row.error));
      }
      for (const std::string& field : row.fields) {
        check.expect(field.find_first_of("\r\n") == std::string::npos, "line end in a field");
      }
    }
  });
}

}  // namespace

std::vector<Finding> run_parsers(std::string_view bytes) {
  std::vector<Finding> out;
  Checker check(out);
  check_fasta(check, bytes);
  check.run("a3m", "fuzz.a3m", [&] { check_msa(check, parse_a3m(bytes, "fuzz.a3m")); });
  check.run("stockholm", "fuzz.sto", [&] { check_msa(check, parse_stockholm(bytes, "fuzz.sto")); });
  check_table(check, bytes, ',');
  check_table(check, bytes, '\t');
  return out;
}

std::vector<Finding> run_discovery(const std::filesystem::path& input) {
  std::vector<Finding> out;
  Checker check(out);
  check.run("discover_jobs", "", [&] {
    const JobList list = discover_jobs(input, QueryOrder::length);
    check.expect(!list.jobs.empty(), "no jobs and no error");
    std::set<std::string> names;
    for (const PredictJob& job : list.jobs) {
      check.expect(!job.name.empty(), "job without a name");
      check.expect(job.name.size() <= max_job_name_bytes(),
                   "job name of " + std::to_string(job.name.size()) + " bytes");
      check.expect(job.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789_.-") == std::string::npos,
                   "unsafe job name " + text::safe_text(job.name));
      check.expect(names.insert(job.name).second, "two jobs named " + job.name);
      check.expect(is_safe(job.error), "job error not escaped");
      if (job.error.empty()) {
        check.expect(is_query_alphabet(job.sequence), "runnable job with a query outside A-Z");
      }
    }
    for (const std::string& w : list.warnings) check.expect(is_safe(w), "warning not escaped");
  });
  return out;
}

}  // namespace cpufold::fuzz
