// ColabFold's --custom-template-path DIR: the mmCIF files in DIR are the template database.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace cpufold {

struct CustomTemplates {
  std::map<std::string, std::filesystem::path> files;  // id (lowercase file stem) -> mmCIF
  std::string seqres_fasta;  // every protein chain as pdb_seqres.txt lists it
};

// Reads every *.cif in `dir`. AF2-DEVIATION (ColabFold builds an HHsearch database from the
// files and runs hhsearch): the chains are written as a pdb_seqres-style FASTA searched with
// hmmsearch like AF2's pdb_seqres. InputError when `dir` holds no .cif file, when a stem is
// not letters and digits, or a file cannot be read.
CustomTemplates read_custom_templates(const std::filesystem::path& dir);

}  // namespace cpufold
