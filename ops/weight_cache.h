// WeightCache: every Linear's weights and bias of one model, in the layout oneDNN's matmul
// chose on this machine, kept in a cache file that is mapped read-only and shared, so
// concurrent processes hold one copy (in the page cache) instead of one private copy each.
//
// Every Linear built with the cache in its LinearSource (ParamScope passes it down from the
// model's root scope) asks it for its memory in construction order, until finish(): a blob of the
// file that matches (same oneDNN memory descriptor, same sampled source values) is used in place;
// otherwise the Linear reorders into private memory as without a cache, and finish() writes a new
// file from all of them, maps it and points every memory at it. A missing, truncated, corrupt or
// stale file is thus rebuilt (with a one-line warning unless it was missing); when no directory is
// writable the weights stay private (with a warning) and residency() says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/blob_cache_file.h"
#include "memory/tensor.h"

namespace cpufold {

// Bytes of a built model's weights: mapped from a shared file (resident once for every
// process on the machine) or held privately by this process.
struct WeightResidency {
  std::size_t shared_bytes = 0;   // the packed Linear weights in the cache file
  std::size_t private_bytes = 0;  // this process's own copies
};

class WeightCache {
 public:
  // The cache for `params` built in `precision` (--precision; part of the key, so each
  // precision and ISA has its own file, bf16 Linears' weights packed in bf16): located as
  // io/cache_location.h says, keyed by the file's content (io/file_identity.h), the
  // oneDNN version and the effective CPU ISA. CPUFOLD_WEIGHT_CACHE=off disables it (no warning).
  static std::unique_ptr<WeightCache> for_parameters(const std::filesystem::path& params,
                                                     DType precision = DType::f32);
  // Disabled when `file` is empty: every Linear keeps a private copy.
  WeightCache(std::filesystem::path file, std::string key);
  ~WeightCache();
  WeightCache(const WeightCache&) = delete;
  WeightCache& operator=(const WeightCache&) = delete;

  // The bytes of the parameter file the weights come from: a tensor inside them is
  // identified by its offset there (so its values are not read), others by sampled values.
  // `release`, when given, is called after every few tens of MB of weights packed from them
  // and at finish(): it drops the pages read so far from this process's memory, so that
  // building the cache does not hold the parameter file and the packed copies at once.
  void set_source(std::span<const std::byte> bytes, std::function<void()> release = {}) {
    source_ = bytes;
    release_source_ = std::move(release);
  }
  std::uint64_t identity(const Tensor& t) const;
  // The memory for a Linear's weight (or bias) of layout `desc`: the cached blob when it
  // matches, else new private memory that `fill` writes. `fingerprint` identifies the source.
  dnnl::memory obtain(const dnnl::memory::desc& desc, std::uint64_t fingerprint,
                      const std::function<void(dnnl::memory&)>& fill);
  // Ends the build: writes and maps the file when anything was missing from it.
  void finish();

  // Packed bytes mapped from the file vs held privately (padding of oneDNN's blocked layouts
  // included).
  WeightResidency residency() const;
  // Reads every page of the mapped file, so that all the shared weights are resident in this
  // process, as they are once a run has used every Linear.
  void make_resident() const;
  // The same weights as plain f32 arrays (no padding): the parameter bytes they stand for.
  std::size_t unpacked_bytes() const;
  const std::filesystem::path& file() const { return file_; }
  // The file was (re)written by this process.
  bool wrote_file() const { return wrote_; }

 private:
  struct Entry {
    dnnl::memory memory;
    std::string meta;  // fingerprint and descriptor, as stored in the file
    bool shared = false;
  };
  void map_entries(BlobCache&& cache);

  std::filesystem::path file_;
  std::string key_;
  std::span<const std::byte> source_;
  std::function<void()> release_source_;
  std::size_t packed_since_release_ = 0;  // bytes
  std::optional<BlobCache> loaded_;       // the file as found (or as written by finish())
  std::vector<Entry> entries_;
  bool stale_ = false;  // some Linear did not find its blob in loaded_
  bool wrote_ = false;
};

// What Linear calls: cache->obtain(...), or private memory without a cache.
dnnl::memory obtain_weight_memory(WeightCache* cache, const dnnl::memory::desc& desc,
                                  std::uint64_t fingerprint,
                                  const std::function<void(dnnl::memory&)>& fill);

// Identifies a weight tensor for `cache` (WeightCache::identity), 0 without one.
std::uint64_t weight_identity(const WeightCache* cache, const Tensor& t);
// Combines identities, e.g. of the parts of a concatenated weight.
std::uint64_t combine_identity(std::uint64_t seed, std::uint64_t value);

}  // namespace cpufold
