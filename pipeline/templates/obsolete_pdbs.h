// The PDB's list of obsolete entries (AF2 data directory: pdb_mmcif/obsolete.dat), read as AF2
// templates.py _parse_obsolete does: a hit on an obsolete entry is skipped, or read from the
// entry that replaced it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cpufold {

// Obsolete PDB id (lowercase) -> the id replacing it, nullopt when it was removed. Only
// "OBSLTE" lines count: "OBSLTE    DD-MMM-YY FROM     TO", the ids at columns 21-24 and 30-33.
using ObsoletePdbs = std::map<std::string, std::optional<std::string>>;
ObsoletePdbs parse_obsolete_pdbs(std::string_view text);
// The file's entries; empty when the file does not exist.
ObsoletePdbs read_obsolete_pdbs(const std::filesystem::path& path);

}  // namespace cpufold
