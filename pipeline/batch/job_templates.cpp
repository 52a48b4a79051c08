#include "pipeline/batch/job_templates.h"

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>

#include "io/atomic_file.h"
#include "io/whole_file.h"
#include "memory/error.h"
#include "pipeline/batch/msa_source.h"
#include "pipeline/templates/custom_templates.h"
#include "pipeline/templates/hhr_hits.h"
#include "pipeline/templates/hmmsearch_hits.h"
#include "pipeline/templates/hmmsearch_templates.h"
#include "pipeline/templates/obsolete_pdbs.h"
#include "pipeline/templates/scratch_directory.h"
#include "pipeline/templates/template_featurizer.h"

namespace cpufold {
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::optional<std::string> text = read_whole_file(path);
  if (!text) throw InputError("cannot read " + path.string());
  return std::move(*text);
}

// The first existing file among DIR/JOB/msas/NAME and DIR/JOB/NAME (AlphaFold2's layout).
std::optional<fs::path> in_msa_dir(const fs::path& msa_dir, const std::string& job,
                                   const std::string& name) {
  if (msa_dir.empty()) return std::nullopt;
  for (const fs::path& p : {msa_dir / job / "msas" / name, msa_dir / job / name}) {
    if (fs::is_regular_file(p)) return p;
  }
  return std::nullopt;
}

// AF2's data directory: pdb_seqres/pdb_seqres.txt (or pdb_seqres.txt at its top).
fs::path mmcif_dir_of(const fs::path& db) {
  return db / "pdb_mmcif" / "mmcif_files";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

fs::path job_search_dir(const fs::path& output_dir, const std::string& job) {
  return output_dir / (job + "_env");
}

void check_template_options(const PredictOptions& o) {
  if (!o.templates) return;
  if (o.template_db.empty() && o.custom_template_path.empty() && o.msa_dir.empty()) {
    throw InputError(
        "--templates needs templates to search or read: give --template-db DIR (AlphaFold2's "
        "data directory: pdb_seqres/pdb_seqres.txt and pdb_mmcif/mmcif_files/), "
        "--custom-template-path DIR (mmCIF files), or --msa-dir with AlphaFold2's "
        "JOB/msas/pdb_hits.sto beside --template-db for the mmCIF files");
  }
  if (!o.template_db.empty() && !fs::is_directory(mmcif_dir_of(o.template_db))) {
    throw InputError("--template-db " + o.template_db.string() +
                     " has no pdb_mmcif/mmcif_files/ "
                     "directory (AlphaFold2's data directory layout)");
  }
  if (!o.custom_template_path.empty()) read_custom_templates(o.custom_template_path);
}

namespace {

struct FoundHits {
  std::vector<TemplateHit> hits;
  std::string source;  // the hit file read or written
  bool hhr = false;
};

// The job's hits, in the order the header says; an hmmsearch run now keeps its result in
// OUTPUT_DIR/JOB_env/pdb_hits.sto.
FoundHits find_template_hits(const PredictJob& job, const PredictOptions& o,
                             const std::optional<CustomTemplates>& custom, const fs::path& scratch,
                             const std::function<void(const std::string&)>& say) {
  FoundHits out;
  const fs::path kept = job_search_dir(o.output_dir, job.name) / "pdb_hits.sto";
  const auto precomputed_sto = in_msa_dir(o.msa_dir, job.name, "pdb_hits.sto");
  const auto precomputed_hhr = in_msa_dir(o.msa_dir, job.name, "pdb_hits.hhr");
  if (!custom && precomputed_sto) {
    out.source = precomputed_sto->string();
    out.hits = parse_hmmsearch_hits(read_text(*precomputed_sto), job.sequence, out.source);
  } else if (!custom && precomputed_hhr) {
    out.source = precomputed_hhr->string();
    out.hits = parse_hhr_hits(read_text(*precomputed_hhr), out.source);
    out.hhr = true;
  } else if (fs::is_regular_file(kept)) {
    out.source = kept.string();
    say("template hits kept from an earlier run: " + out.source + " (no search)");
    out.hits = parse_hmmsearch_hits(read_text(kept), job.sequence, out.source);
  } else {
    if (!custom && o.template_db.empty()) {
      throw InputError("job " + job.name +
                       ": --templates: --msa-dir has no pdb_hits.sto or "
                       "pdb_hits.hhr for it and there is no --template-db to search");
    }
    HmmsearchSettings search;
    search.threads = std::max(1, o.threads);
    if (custom) {
      search.database = scratch / "custom_seqres.txt";
      write_file_atomically(search.database, custom->seqres_fasta);
    } else {
      search.database = pdb_seqres_file(o.template_db);
    }
    std::optional<std::string> msa;
    auto uniref = in_msa_dir(o.msa_dir, job.name, "uniref90_hits.sto");
    if (!uniref && !o.databases.empty()) {
      uniref = in_msa_dir(searched_msa_dir(o.output_dir), job.name, "uniref90_hits.sto");
    }
    if (uniref) {
      msa = read_text(*uniref);
    }
    say("searching templates with hmmsearch in " +
        (custom ? o.custom_template_path.string() : search.database.string()) + " (profile of " +
        (msa ? "uniref90_hits.sto" : "the query alone") + ")");
    const std::string sto = hmmsearch_pdb_seqres(job.sequence, msa, search);
    fs::create_directories(kept.parent_path());
    remove_stale_temporaries(kept.parent_path());  // left by a run killed while writing
    write_file_atomically(kept, sto);
    out.source = kept.string();
    out.hits = parse_hmmsearch_hits(sto, job.sequence, out.source);
  }
  return out;
}

std::optional<CustomTemplates> custom_templates(const PredictOptions& o) {
  if (o.custom_template_path.empty()) return std::nullopt;
  return read_custom_templates(o.custom_template_path);
}

}  // namespace

void search_job_template_hits(const PredictJob& job, const PredictOptions& o,
                              const std::function<void(const std::string&)>& say) {
  const ScratchDirectory scratch("templates");
  find_template_hits(job, o, custom_templates(o), scratch.path(), say);
}

JobTemplates load_job_templates(const PredictJob& job, const PredictOptions& o,
                                const std::function<void(const std::string&)>& say) {
  const auto start = std::chrono::steady_clock::now();
  JobTemplates out;
  const ScratchDirectory scratch("templates");
  const std::optional<CustomTemplates> custom = custom_templates(o);
  FoundHits found = find_template_hits(job, o, custom, scratch.path(), say);
  out.source = found.source;
  std::vector<TemplateHit> hits = std::move(found.hits);
  const bool hhr = found.hhr;

  TemplateFeaturizerSettings settings;
  settings.max_template_date = o.max_template_date;
  settings.deduplicate = !hhr;  // AF2's HHsearch featurizer keeps repeated sequences
  settings.scratch = scratch.path();
  if (custom) {
    settings.mmcif_path = [files = custom->files](const std::string& id) {
      const auto it = files.find(id);
      return it == files.end() ? fs::path() : it->second;
    };
  } else {
    if (o.template_db.empty()) {
      throw InputError("job " + job.name + ": template hits in " + out.source +
                       " need their mmCIF files: give --template-db DIR (pdb_mmcif/mmcif_files/)");
    }
    settings.mmcif_path = [dir = mmcif_dir_of(o.template_db)](const std::string& id) {
      return dir / (id + ".cif");
    };
    settings.obsolete = read_obsolete_pdbs(o.template_db / "pdb_mmcif" / "obsolete.dat");
  }
  FeaturizedTemplates t = featurize_templates(job.sequence, std::move(hits), settings);
  for (const std::string& why : t.skipped) say("template hit skipped: " + why);
  out.raw = std::move(t.raw);
  out.names = std::move(t.names);
  say("templates: " + std::to_string(out.raw.n_templ) + " from " + out.source +
      (out.names.empty() ? " (the job folds without templates)" : " (" + joined(out.names) + ")"));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace cpufold
