#include "tests/support/tiny_search_databases.h"

#include <fstream>
#include <random>
#include <set>

#include "tests/support/test_support.h"

namespace cpufold::testing {
namespace {

namespace fs = std::filesystem;

std::string shell_quoted(const fs::path& p) {
  std::string quoted = "'";
  quoted += p.string();
  quoted += '\'';
  return quoted;
}

// The protein a mutant was made from ("" for a random sequence).
std::string protein_of(const std::string& name) {
  const std::size_t at = name.rfind("_m");
  return at == std::string::npos ? std::string() : name.substr(0, at);
}

// Runs `command`; "" when it succeeded, else the command and its output.
std::string run_ok(const std::string& command) {
  const CommandResult r = run_command(command);
  return r.exit_code == 0 ? std::string()
                          : command + " -> " + std::to_string(r.exit_code) + ":\n" + r.output;
}

}  // namespace

std::vector<FastaRecord> example_proteins() {
  std::ifstream in(test_data_dir().parent_path().parent_path() / "data" / "examples" /
                   "proteins.fasta");
  std::vector<FastaRecord> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '>') {
      out.push_back({line.substr(1), ""});
    } else if (!out.empty()) {
      out.back().sequence += line;
    }
  }
  return out;
}

std::vector<FastaRecord> mutated_database(std::size_t per_protein, std::size_t random,
                                          unsigned seed) {
  static const std::string kAminoAcids = "ACDEFGHIKLMNPQRSTVWY";
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::size_t> letter(0, kAminoAcids.size() - 1);
  std::set<std::string> seen;
  std::vector<FastaRecord> out;
  const std::vector<FastaRecord> proteins = example_proteins();
  for (const FastaRecord& protein : proteins) {
    seen.insert(protein.sequence);
    for (std::size_t k = 0; k < per_protein;) {
      const double rate = 0.05 + 0.30 * static_cast<double>(k) / static_cast<double>(per_protein);
      std::string s = protein.sequence;
      for (char& c : s) {
        if (unit(rng) < rate) c = kAminoAcids[letter(rng)];
      }
      if (!seen.insert(s).second) continue;
      out.push_back({protein.name + "_m" + std::to_string(k), s});
      ++k;
    }
  }
  std::uniform_int_distribution<std::size_t> length(30, 90);
  for (std::size_t k = 0; k < random;) {
    std::string s(length(rng), 'A');
    for (char& c : s) c = kAminoAcids[letter(rng)];
    if (!seen.insert(s).second) continue;
    out.push_back({"rnd" + std::to_string(k), s});
    ++k;
  }
  return out;
}

std::size_t mutants_of(const std::vector<FastaRecord>& db, const std::string& protein) {
  std::size_t n = 0;
  for (const FastaRecord& r : db) n += protein_of(r.name) == protein ? 1 : 0;
  return n;
}

void write_fasta(const fs::path& file, const std::vector<FastaRecord>& records) {
  std::string text;
  for (const FastaRecord& r : records)
    text += ">" + r.name + " tiny test database\n" + r.sequence + "\n";
  fs::create_directories(file.parent_path());
  write_file(file, text);
}

void write_af2_fasta_databases(const fs::path& dir, const std::vector<FastaRecord>& uniref90,
                               const std::vector<FastaRecord>& mgnify,
                               const std::vector<FastaRecord>& small_bfd) {
  write_fasta(dir / "uniref90" / "uniref90.fasta", uniref90);
  write_fasta(dir / "mgnify" / "mgy_clusters_2022_05.fa", mgnify);
  write_fasta(dir / "small_bfd" / "bfd-first_non_consensus_sequences.fasta", small_bfd);
}

std::string write_hhsuite_database(const fs::path& prefix, const std::vector<FastaRecord>& records,
                                   std::size_t group) {
  const fs::path entries = prefix.string() + "_entries";
  fs::create_directories(entries);
  std::size_t i = 0, entry = 0;
  while (i < records.size()) {
    const std::string protein = protein_of(records[i].name);
    std::string a3m;
    std::size_t taken = 0;
    while (i < records.size() && taken < group && !protein.empty() &&
           protein_of(records[i].name) == protein) {
      a3m += ">" + records[i].name + "\n" + records[i].sequence + "\n";
      ++i;
      ++taken;
    }
    if (taken == 0) {  // a random sequence: an entry of its own
      a3m = ">" + records[i].name + "\n" + records[i].sequence + "\n";
      ++i;
    }
    write_file(entries / (std::to_string(entry++) + ".a3m"), a3m);
  }
  const std::string p = prefix.string();
  std::string error = run_ok("ffindex_build -s " + shell_quoted(p + "_a3m.ffdata") + " " +
                             shell_quoted(p + "_a3m.ffindex") + " " + shell_quoted(entries));
  // Debian's cstranslate wrapper looks for its binaries in the wrong place: call one directly.
  if (error.empty()) {
    error = run_ok("/usr/libexec/hhsuite/cstranslate-plain -f -x 0.3 -c 4 -I a3m -b -i " +
                   shell_quoted(p + "_a3m") + " -o " + shell_quoted(p + "_cs219") +
                   " -A /usr/share/hhsuite/data/cs219.lib"
                   " -D /usr/share/hhsuite/data/context_data.lib");
  }
  std::error_code ec;
  fs::remove_all(entries, ec);
  return error;
}

std::string write_mmseqs_database(const fs::path& dir, const std::string& name,
                                  const std::vector<FastaRecord>& records) {
  const fs::path work = dir / (name + "_work");
  fs::create_directories(work);
  write_fasta(work / "records.fasta", records);
  const std::string db = (dir / name).string();
  const std::string seq = db + "_seq";
  const std::string clu = (work / "clu").string();
  for (const std::string& command :
       {"mmseqs createdb " + shell_quoted(work / "records.fasta") + " " + shell_quoted(seq) +
            " -v 1",
        "mmseqs cluster " + shell_quoted(seq) + " " + shell_quoted(clu) + " " +
            shell_quoted(work / "tmp") + " --min-seq-id 1.0 -c 1.0 --threads 1 -v 1",
        "mmseqs align " + shell_quoted(seq) + " " + shell_quoted(seq) + " " + shell_quoted(clu) +
            " " + shell_quoted(db + "_aln") + " -a -e inf --threads 1 -v 1",
        "mmseqs cpdb " + shell_quoted(seq) + " " + shell_quoted(db) + " -v 1",
        "mmseqs cpdb " + shell_quoted(seq + "_h") + " " + shell_quoted(db + "_h") + " -v 1"}) {
    const std::string error = run_ok(command);
    if (!error.empty()) return error;
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  return {};
}

}  // namespace cpufold::testing
