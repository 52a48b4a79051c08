#include "pipeline/batch/msa_directory.h"

#include <algorithm>
#include <array>
#include <set>

#include "io/stockholm.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// AF2 data/pipeline.py DataPipeline: the databases in make_msa_features order, each with the
// file names its tools write (first found wins).
struct KnownMsa {
  std::vector<std::string> names;
};
const std::array<KnownMsa, 3>& known_msas() {
  static const std::array<KnownMsa, 3> known = {{
      {{"uniref90_hits.sto", "uniref90_hits.a3m"}},
      {{"bfd_uniref_hits.a3m", "bfd_uniref_hits.sto", "bfd_uniclust_hits.a3m",
        "bfd_uniclust_hits.sto", "small_bfd_hits.sto", "small_bfd_hits.a3m"}},
      {{"mgnify_hits.sto", "mgnify_hits.a3m"}},
  }};
  return known;
}

bool is_msa_extension(const fs::path& p) {
  return p.extension() == ".a3m" || p.extension() == ".sto";
}

// Not MSAs of the monomer pipeline: template search hits and multimer pairing hits.
bool is_not_monomer_msa(const fs::path& p) {
  const std::string stem = p.stem().string();
  return stem == "pdb_hits" || stem == "hmm_output" || stem == "uniprot_hits";
}

JobMsaFiles scan_directory(const fs::path& dir, const std::string& layout) {
  JobMsaFiles out;
  out.layout = layout + " " + dir.string();
  std::set<std::string> claimed;
  for (const KnownMsa& known : known_msas()) {
    bool used = false;
    for (const std::string& name : known.names) {
      if (!fs::is_regular_file(dir / name)) continue;
      claimed.insert(name);
      if (!used) {
        out.files.push_back(dir / name);
        used = true;
      } else {
        out.skipped.push_back((dir / name).string() + " (" + out.files.back().filename().string() +
                              " is used for the same database)");
      }
    }
  }
  std::vector<fs::path> others;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& p = entry.path();
    if (!entry.is_regular_file() || !is_msa_extension(p)) continue;
    if (claimed.count(p.filename().string())) continue;
    if (is_not_monomer_msa(p)) {
      out.skipped.push_back(p.string() + " (template or pairing hits, not a monomer MSA)");
      continue;
    }
    others.push_back(p);
  }
  std::sort(others.begin(), others.end());
  out.files.insert(out.files.end(), others.begin(), others.end());
  return out;
}

}  // namespace

JobMsaFiles find_job_msas(const fs::path& msa_dir, const std::string& job) {
  for (const char* ext : {".a3m", ".sto"}) {
    const fs::path flat = msa_dir / (job + ext);
    std::error_code ec;
    if (fs::is_regular_file(flat, ec)) {
      JobMsaFiles out;
      out.files.push_back(flat);
      out.layout = "file " + flat.string();
      return out;
    }
  }
  const std::pair<fs::path, const char*> dirs[] = {
      {msa_dir / job / "msas", "AlphaFold2 output directory"},
      {msa_dir / job, "directory"},
      {msa_dir / "alignments" / job, "OpenFold alignments directory"},
  };
  JobMsaFiles none;
  for (const auto& [dir, layout] : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    JobMsaFiles found = scan_directory(dir, layout);
    if (!found.files.empty()) return found;
    none.skipped.insert(none.skipped.end(), found.skipped.begin(), found.skipped.end());
  }
  return none;
}

std::int64_t af2_hit_limit(const fs::path& file) {
  const std::string stem = file.stem().string();
  if (stem == "uniref90_hits") return 10000;
  if (stem == "mgnify_hits") return 501;
  return 0;
}

Msa read_msa_file(const fs::path& file) {
  Msa msa = file.extension() == ".sto" ? read_stockholm(file) : read_a3m(file);
  const std::int64_t limit = af2_hit_limit(file);
  if (limit > 0 && static_cast<std::int64_t>(msa.sequences.size()) > limit) {
    msa.sequences.resize(limit);
    msa.deletions.resize(limit);
    msa.descriptions.resize(limit);
  }
  return msa;
}

}  // namespace cpufold
