// cpufold's HDF5 weights file, made to be memory-mapped rather than read.
//
// Layout (format "cpufold-weights-v1"):
// - Root attributes, all strings: cpufold_format = "cpufold-weights-v1" (marks the file as
//   ours), source_file (the .npz it came from), preset, key_encoding (this rule, for people
//   reading the file with h5py), plus whatever else the writer's caller passes.
// - One dataset per AF2 key, all in the flat group "/params". AF2 keys contain '/' and '//',
//   which HDF5 would read as (collapsed) path separators, so each key is one link name with
//   '%' -> "%25" and '/' -> "%2F" (and a key of exactly "." -> "%2E"). Decoding reverses
//   this exactly, so keys read back byte for byte identical.
// - Every dataset is CONTIGUOUS (no chunks, no filters), little-endian, allocated early and
//   aligned to 64 bytes in the file, so a dataset's bytes are one range of the file that a
//   read-only mapping can view in place.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.h"
#include "io/named_tensor.h"

namespace cpufold {

inline constexpr std::string_view kCpufoldFormat = "cpufold-weights-v1";
inline constexpr std::string_view kHdf5ParamsGroup = "params";

std::string encode_hdf5_key(std::string_view key);
// nullopt when `name` is not a valid encoding (a corrupt or foreign file).
std::optional<std::string> decode_hdf5_key(std::string_view name);

// Writes a new file at `path` (replacing any) in the layout above. `attributes` are written
// as root string attributes after cpufold_format and key_encoding. Tensors must be contiguous.
// Throws WeightsError naming the file (and key) when HDF5 fails.
void write_hdf5_weights(const std::filesystem::path& path, std::span<const NamedTensor> arrays,
                        const std::map<std::string, std::string>& attributes);

struct Hdf5Weights {
  MappedFile mapping;                             // the whole file, PROT_READ + MAP_SHARED
  std::vector<NamedTensor> arrays;                // views into `mapping`, sorted by key
  std::map<std::string, std::string> attributes;  // root string attributes
};

// Maps a cpufold weights file. Throws WeightsError when the file is not HDF5, is HDF5 but not
// ours (no cpufold_format attribute), has another format version, or is corrupt (a dataset
// outside the file, chunked, misaligned, undecodable name, ...).
Hdf5Weights open_hdf5_weights(const std::filesystem::path& path);

}  // namespace cpufold
