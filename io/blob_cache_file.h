// A cache file of binary blobs, written once and mapped read-only and shared (MAP_SHARED) by
// every process after, so they share one copy in the page cache. A header (magic, format
// version, the key the blobs were made for, an index and checksums) lets a reader refuse a
// truncated, corrupt or foreign file instead of using garbage.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.h"

namespace cpufold {

// One blob: what it is (`meta`, opaque to this file, checked by the user) and its bytes.
struct Blob {
  std::string meta;
  std::span<const std::byte> data;
};

// Writes `blobs` under `key` to `path` atomically (a reader sees the old file or the whole
// new one); each blob starts 64-byte aligned. InputError naming the file on failure.
void write_blob_cache(const std::filesystem::path& path, std::string_view key,
                      std::span<const Blob> blobs);

struct BlobCache {
  MappedFile mapping;
  std::vector<Blob> blobs;  // views into mapping
};

struct BlobCacheLoad {
  std::optional<BlobCache> cache;
  std::string problem;  // why there is no cache: empty when the file does not exist
};

// Maps `path` and checks it whole (size, magic, version, key, index and data checksums).
BlobCacheLoad load_blob_cache(const std::filesystem::path& path, std::string_view key);

}  // namespace cpufold
