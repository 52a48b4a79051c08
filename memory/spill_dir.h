// The spill directory: where the file tier creates its files. What the planner needs to know
// about it (free space, whether it is memory in disguise) and a check, before any model work,
// that it can be used at all.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "memory/unique_fd.h"

namespace cpufold {

// Bytes an unprivileged writer can still allocate there (statvfs f_bavail * f_frsize).
// Throws InputError when the directory cannot be examined.
std::size_t spill_free_bytes(const std::filesystem::path& dir);

// True when files there live in RAM (tmpfs, ramfs): spilling there frees no DRAM, so the
// planner must count such a tier as DRAM.
bool spill_dir_in_memory(const std::filesystem::path& dir);
// What cpufold says of a spill directory in memory: it is not used for spilling, and why.
std::string spill_dir_unused_reason(const std::filesystem::path& dir);

// Throws InputError saying what is wrong and what to do unless `dir` is an existing
// directory in which this process can create files.
void require_spill_dir(const std::filesystem::path& dir);

// A new file in `dir` that has no name: it disappears when the last descriptor or mapping
// goes, even after a crash. O_TMPFILE where the file system supports it, else mkstemp and an
// immediate unlink. Throws InputError (with errno's text) when neither works.
UniqueFd create_unnamed_file(const std::filesystem::path& dir);

// The fallback alone (mkstemp + unlink), for file systems without O_TMPFILE; public so that
// tests reach it on file systems that have O_TMPFILE.
UniqueFd create_named_then_unlinked_file(const std::filesystem::path& dir);

}  // namespace cpufold
