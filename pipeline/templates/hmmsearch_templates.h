// The template search of AF2's monomer pipeline with hmmsearch (AF2 data/tools/hmmbuild.py,
// hmmsearch.py; pipeline.py): a profile HMM built from the query's uniref90 alignment (or the
// query alone) searched against pdb_seqres.txt.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace cpufold {

struct HmmsearchSettings {
  std::filesystem::path database;  // pdb_seqres.txt (FASTA, "ID_CHAIN mol:protein length:N")
  int threads = 1;                 // hmmsearch --cpu (AF2: 8)
};

// hmmsearch's Stockholm output (what AF2 writes to pdb_hits.sto). `msa_sto` is the job's
// uniref90_hits.sto text (prepared as AF2 does: msa_for_templates.h); without it the profile is
// built from the query alone. The profile is
// built with `hmmbuild --hand --amino` (match states: the #=GC RF columns, which jackhmmer sets
// to the query's residues); hmmsearch runs with AF2's flags: --F1 0.1 --F2 0.1 --F3 0.1
// --incE 100 -E 100 --domE 100 --incdomE 100 --noali. InputError for a missing database or
// program; a program that fails or is killed throws as run_program does
// (pipeline/search/external_program.h). Nothing is written.
std::string hmmsearch_pdb_seqres(const std::string& query,
                                 const std::optional<std::string>& msa_sto,
                                 const HmmsearchSettings& settings);

// AlphaFold2's seqres file in data directory `db`: pdb_seqres/pdb_seqres.txt, else
// pdb_seqres.txt.
std::filesystem::path pdb_seqres_file(const std::filesystem::path& db);

// The query alone as a Stockholm alignment whose RF line marks every residue a match state.
std::string query_stockholm(const std::string& query);

}  // namespace cpufold
