// Zip archives of output files (libzip), written under a temporary name and renamed, so a
// reader never sees a half-written archive.
#pragma once

#include <filesystem>
#include <span>

namespace cpufold {

// `path` holding each of `files` (deflated) under its file name. InputError naming the path
// when it cannot be written.
void write_zip_atomically(const std::filesystem::path& path,
                          std::span<const std::filesystem::path> files);

}  // namespace cpufold
