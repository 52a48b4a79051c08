// Tiny sequence databases for the tests of `cpufold search`, made on the fly from the example
// proteins (data/examples/proteins.fasta): mutants of each (substitutions only, 5-35% of the
// residues, so every mutant is aligned to its protein without gaps) and unrelated random
// sequences, laid out as AlphaFold2's data directory and as ColabFold's MMseqs2 databases.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace cpufold::testing {

struct FastaRecord {
  std::string name;
  std::string sequence;
};

// The example proteins (name, sequence) in file order.
std::vector<FastaRecord> example_proteins();

// `per_protein` mutants of every example protein (named PROTEIN_mN) and `random` unrelated
// sequences (rndN), all distinct; the same for the same `seed`.
std::vector<FastaRecord> mutated_database(std::size_t per_protein, std::size_t random,
                                          unsigned seed);

// How many records of `db` are mutants of `protein`.
std::size_t mutants_of(const std::vector<FastaRecord>& db, const std::string& protein);

void write_fasta(const std::filesystem::path& file, const std::vector<FastaRecord>& records);

// AF2's layout under `dir` for jackhmmer: uniref90/uniref90.fasta, mgnify/mgy_clusters_2022_05.fa
// and small_bfd/bfd-first_non_consensus_sequences.fasta, each written from its records.
void write_af2_fasta_databases(const std::filesystem::path& dir,
                               const std::vector<FastaRecord>& uniref90,
                               const std::vector<FastaRecord>& mgnify,
                               const std::vector<FastaRecord>& small_bfd);

// An HH-suite database PREFIX_{a3m,cs219}.ff{data,index} (hhblits -d PREFIX) made with
// ffindex_build and cstranslate: one A3M entry per group of `group` consecutive records (the
// mutants of one protein are aligned column for column). Returns "" or the failing command's
// output.
std::string write_hhsuite_database(const std::filesystem::path& prefix,
                                   const std::vector<FastaRecord>& records, std::size_t group);

// A ColabFold-named MMseqs2 database DIR/NAME with NAME_seq, NAME_aln (every sequence aligned
// to itself, so expandaln keeps each hit as it is) and NAME_h, made with mmseqs createdb,
// cluster and align. Stands in for ColabFold's profile databases: the search steps are the
// same. Returns "" or the failing command's output.
std::string write_mmseqs_database(const std::filesystem::path& dir, const std::string& name,
                                  const std::vector<FastaRecord>& records);

}  // namespace cpufold::testing
