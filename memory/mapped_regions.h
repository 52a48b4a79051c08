// File mappings that can fault: a page of a MAP_SHARED file mapping raises SIGBUS when the file
// was truncated under it (a weight cache cut in place, a parameter file replaced by writing
// over it) or its storage failed. Mappings are registered here with their file's name, so the
// SIGBUS handler can say which file it was instead of the shell's bare "Bus error".
#pragma once

#include <cstddef>
#include <string_view>

namespace cpufold {

// Records [begin, begin + bytes) as a mapping of `file` (a description; the first 400 bytes are
// kept). Up to 64 mappings are named; more are still caught, without a name.
void register_mapped_region(const void* begin, std::size_t bytes, std::string_view file);
// Forgets the mapping that starts at `begin` (before it is unmapped).
void unregister_mapped_region(const void* begin);

// Installs the SIGBUS handler: it writes "cpufold: error: ..." naming the file of the faulting
// address and what to do, then lets the signal end the process as before (exit status 135).
// Call once, first thing in main().
void install_sigbus_message();

}  // namespace cpufold
