// AF2 `.npz` parameter files: a zip archive (stored or deflated entries) of `.npy` arrays.
// Entry "x.npy" becomes key "x". All arrays are loaded into one DRAM-tier region, so the peak
// tracker sees them, and the region is made read-only once loaded.
#pragma once

#include <filesystem>
#include <vector>

#include "io/named_tensor.h"
#include "memory/tier.h"

namespace cpufold {

struct NpzContents {
  Region storage;                   // owns the bytes every tensor views (64-byte aligned each)
  std::vector<NamedTensor> arrays;  // in archive order
};

// Throws WeightsError naming the file (and the entry) when the file is missing, is not a zip
// archive, is truncated or corrupt (including CRC mismatches), or holds a bad `.npy`.
NpzContents read_npz(const std::filesystem::path& path);

}  // namespace cpufold
