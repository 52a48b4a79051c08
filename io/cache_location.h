// Where cpufold keeps files derived from an input (e.g. the packed weights of a parameter
// file), in the order they are looked for: $CPUFOLD_CACHE_DIR when set (the only place
// then), else a `cpufold-cache` directory next to the source, else $XDG_CACHE_HOME/cpufold
// (~/.cache/cpufold when unset).
#pragma once

#include <filesystem>
#include <vector>

namespace cpufold {

std::vector<std::filesystem::path> cache_directories(const std::filesystem::path& source);

// Creates `dir` if needed; true when this process can create files in it.
bool writable_directory(const std::filesystem::path& dir);

}  // namespace cpufold
