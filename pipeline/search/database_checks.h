// Cheap sanity checks of search databases before any program runs, so a missing or truncated
// file is reported as such (exit 2) rather than as a search program's crash.
#pragma once

#include <filesystem>

namespace cpufold {

// A FASTA database: a non-empty file whose first character is '>'.
void check_fasta_database(const std::filesystem::path& file);

// An HH-suite database PREFIX (hhblits -d): PREFIX_{a3m,hhm,cs219}.{ffdata,ffindex} present
// (hhm is optional when `need_hhm` is false), and the first and last entries of every
// .ffindex lie inside its .ffdata.
void check_ffindex_database(const std::filesystem::path& prefix, bool need_hhm = true);

// An MMseqs2 database PREFIX: PREFIX.dbtype (4 bytes), PREFIX.index, and the data file
// (PREFIX or PREFIX.0 when split); the first and last entries of the index lie inside the
// data (of an unsplit database).
void check_mmseqs_database(const std::filesystem::path& prefix);

}  // namespace cpufold
