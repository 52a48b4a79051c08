// Crash-safe output files: a reader (or a rerun) sees either the old file or the whole new
// one, never a half-written file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string_view>

namespace cpufold {

// Writes `bytes` to a temporary file in the destination's directory (".NAME.tmp.PID"),
// fsyncs it and renames it over `path`. InputError naming `path` on any failure (the
// temporary file is removed).
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);
// The same for a file made of `pieces` in order, so large parts need not be copied into one
// buffer first.
void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::string_view> pieces);
// The same for a file produced piece by piece, so a large file is never held whole:
// `produce(write)` calls write(bytes) for each piece in order. An exception from `produce`
// removes the temporary file and propagates.
using PieceWriter = std::function<void(std::string_view)>;
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(const PieceWriter&)>& produce);

// The most bytes the temporary name adds to a file name: the leading '.', ".tmp." and the
// widest PID.
std::size_t temporary_name_overhead();

// Removes temporary files left by write_file_atomically in `dir` by processes that were
// killed (".NAME.tmp.PID" files whose PID is no longer running; a live process's temporary is
// kept, so concurrent instances can share a directory). Returns how many were removed; 0 when
// `dir` does not exist.
std::size_t remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace cpufold
