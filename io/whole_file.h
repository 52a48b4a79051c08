// A small file read whole into memory (a tool's output, a hit list, a list of obsolete entries).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace cpufold {

// The bytes of `path`, or nullopt when it cannot be opened.
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

}  // namespace cpufold
