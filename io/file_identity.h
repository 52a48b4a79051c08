// The identity of a parameter file by its content, so that nothing derived from it (the
// weight cache, run checkpoints) is reused after the file is replaced by different bytes of
// the same size and timestamp (`cp -p`, `rsync -a` and `tar x` keep the mtime).
//
// The hash (XXH3, 128 bits, over every byte) is computed once per version of the file and
// remembered in a small record in the file's cache directory (io/cache_location.h). The record
// is trusted while the file's device, inode, size, mtime and ctime are all unchanged: any write
// or rename sets the ctime to the current time, and no tool can set it back.
#pragma once

#include <filesystem>
#include <string>

namespace cpufold {

// "xxh3-128:<32 hex digits>" for the bytes of `file`. InputError when it cannot be read or
// changes while it is read.
std::string file_content_hash(const std::filesystem::path& file);

}  // namespace cpufold
