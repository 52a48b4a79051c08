#include "ops/weight_cache.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string_view>

#include "io/cache_location.h"
#include "io/file_identity.h"
#include "memory/error.h"
#include "memory/heap_policy.h"
#include "ops/dnnl_context.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// Packed bytes between two releases of the source pages: small against the weights (a few
// hundred MB), large enough that the releases cost nothing next to the packing.
constexpr std::size_t kReleaseSourceEvery = std::size_t{32} << 20;

void warn(const std::string& message) {
  std::cerr << "cpufold: warning: " << message << "\n";
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xC2B2AE3D27D4EB4Full;
}

// The file's record of a blob: the source fingerprint, then oneDNN's descriptor as bytes.
std::string meta_of(const dnnl::memory::desc& desc, std::uint64_t fingerprint) {
  std::string meta(sizeof fingerprint + sizeof desc.data, '\0');
  std::memcpy(meta.data(), &fingerprint, sizeof fingerprint);
  std::memcpy(meta.data() + sizeof fingerprint, &desc.data, sizeof desc.data);
  return meta;
}

// True when `blob` holds a buffer of layout `desc` made from the source `fingerprint`. The
// stored descriptor is compared by oneDNN (not by bytes) after a bounds check of the fields
// that oneDNN's comparison indexes with.
bool blob_matches(const Blob& blob, const dnnl::memory::desc& desc, std::uint64_t fingerprint) {
  dnnl::memory::desc stored;
  std::uint64_t stored_fingerprint = 0;
  if (blob.meta.size() != sizeof stored_fingerprint + sizeof stored.data) return false;
  std::memcpy(&stored_fingerprint, blob.meta.data(), sizeof stored_fingerprint);
  std::memcpy(&stored.data, blob.meta.data() + sizeof stored_fingerprint, sizeof stored.data);
  if (stored_fingerprint != fingerprint) return false;
  if (stored.data.ndims < 0 || stored.data.ndims > DNNL_MAX_NDIMS ||
      stored.data.format_kind != desc.data.format_kind) {
    return false;
  }
  if (stored.data.format_kind == dnnl_blocked) {
    const int nblks = stored.data.format_desc.blocking.inner_nblks;
    if (nblks < 0 || nblks > DNNL_MAX_NDIMS) return false;
  }
  return stored == desc && blob.data.size() == desc.get_size();
}

std::string key_for(const fs::path& params, DType precision) {
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream key;
  key << "cpufold packed Linear weights\nparams " << file_content_hash(params) << "\nonednn "
      << v->major << "." << v->minor << "." << v->patch << " " << v->hash << "\nisa "
      << static_cast<int>(dnnl::get_effective_cpu_isa()) << "\nprecision " << dtype_name(precision)
      << "\n";
  return key.str();
}

}  // namespace

std::unique_ptr<WeightCache> WeightCache::for_parameters(const fs::path& params, DType precision) {
  const char* setting = std::getenv("CPUFOLD_WEIGHT_CACHE");
  if (setting != nullptr &&
      (std::string_view(setting) == "off" || std::string_view(setting) == "0"))
    return std::make_unique<WeightCache>(fs::path(), std::string());
  const std::string key = key_for(params, precision);
  char name_hash[17];
  std::snprintf(name_hash, sizeof name_hash, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(key)));
  const std::string name = params.stem().string() + "." + name_hash + ".weights";
  const std::vector<fs::path> dirs = cache_directories(params);
  std::error_code ec;
  for (const fs::path& dir : dirs) {
    // The constructor checks it and rebuilds it when it is unusable.
    if (fs::exists(dir / name, ec)) return std::make_unique<WeightCache>(dir / name, key);
  }
  for (const fs::path& dir : dirs) {
    if (writable_directory(dir)) return std::make_unique<WeightCache>(dir / name, key);
  }
  std::string tried;
  for (const fs::path& dir : dirs) tried += (tried.empty() ? "" : ", ") + dir.string();
  warn("no writable directory for the weight cache (tried " + tried +
       "): this process keeps a private copy of the weights; set CPUFOLD_CACHE_DIR to share "
       "them between processes");
  return std::make_unique<WeightCache>(fs::path(), std::string());
}

WeightCache::WeightCache(fs::path file, std::string key)
    : file_(std::move(file)), key_(std::move(key)) {
  if (file_.empty()) return;
  BlobCacheLoad load = load_blob_cache(file_, key_);
  if (load.cache) {
    loaded_ = std::move(load.cache);
  } else if (!load.problem.empty()) {
    warn("weight cache " + file_.string() + " is unusable (" + load.problem + "); rebuilding it");
  }
}

WeightCache::~WeightCache() = default;

dnnl::memory WeightCache::obtain(const dnnl::memory::desc& desc, std::uint64_t fingerprint,
                                 const std::function<void(dnnl::memory&)>& fill) {
  const auto& engine = DnnlContext::instance().engine();
  const std::size_t i = entries_.size();
  if (loaded_ && !stale_ && i < loaded_->blobs.size() &&
      blob_matches(loaded_->blobs[i], desc, fingerprint)) {
    // oneDNN only reads weights; the const_cast hands it the read-only mapping.
    void* data = const_cast<std::byte*>(loaded_->blobs[i].data.data());
    entries_.push_back({dnnl::memory(desc, engine, data), meta_of(desc, fingerprint), true});
    return entries_.back().memory;
  }
  // Once one Linear misses, later blobs cannot be trusted to line up: all go private.
  stale_ = stale_ || loaded_.has_value();
  dnnl::memory m(desc, engine);
  fill(m);
  entries_.push_back({m, meta_of(desc, fingerprint), false});
  packed_since_release_ += desc.get_size();
  if (release_source_ && packed_since_release_ >= kReleaseSourceEvery) {
    release_source_();
    packed_since_release_ = 0;
  }
  return m;
}

void WeightCache::finish() {
  if (release_source_) release_source_();  // also what the modules copied, not packed
  release_source_ = nullptr;
  packed_since_release_ = 0;
  if (file_.empty() || entries_.empty()) return;
  if (loaded_ && !stale_ && entries_.size() == loaded_->blobs.size()) return;
  if (loaded_) {
    warn("weight cache " + file_.string() +
         " does not match this model's weights or layouts; rebuilding it");
  }
  std::vector<Blob> blobs;
  blobs.reserve(entries_.size());
  for (const Entry& e : entries_) {
    const auto* data = static_cast<const std::byte*>(e.memory.get_data_handle());
    blobs.push_back({e.meta, {data, e.memory.get_desc().get_size()}});
  }
  try {
    write_blob_cache(file_, key_, blobs);
  } catch (const InputError& e) {
    warn(std::string(e.what()) + "; this process keeps a private copy of the weights");
    return;
  }
  wrote_ = true;
  BlobCacheLoad load = load_blob_cache(file_, key_);
  if (!load.cache) {
    warn("weight cache " + file_.string() + " cannot be read back (" + load.problem +
         "); this process keeps a private copy of the weights");
    return;
  }
  map_entries(std::move(*load.cache));
}

// Points every memory at its blob of `cache` (freeing private buffers), when the file holds
// exactly what was written (another process may have replaced it since).
void WeightCache::map_entries(BlobCache&& cache) {
  if (cache.blobs.size() != entries_.size()) return;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (cache.blobs[i].meta != entries_[i].meta) return;
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    entries_[i].memory.set_data_handle(const_cast<std::byte*>(cache.blobs[i].data.data()));
    entries_[i].shared = true;
  }
  loaded_ = std::move(cache);  // the previous mapping, if any, is no longer viewed
  return_free_heap_memory();   // the private copies just freed
}

WeightResidency WeightCache::residency() const {
  WeightResidency r;
  for (const Entry& e : entries_) {
    (e.shared ? r.shared_bytes : r.private_bytes) += e.memory.get_desc().get_size();
  }
  return r;
}

void WeightCache::make_resident() const {
  if (loaded_) loaded_->mapping.make_resident();
}

std::size_t WeightCache::unpacked_bytes() const {
  std::size_t bytes = 0;
  for (const Entry& e : entries_) {
    std::size_t n = sizeof(float);
    for (const auto d : e.memory.get_desc().dims()) n *= static_cast<std::size_t>(d);
    bytes += n;
  }
  return bytes;
}

dnnl::memory obtain_weight_memory(WeightCache* cache, const dnnl::memory::desc& desc,
                                  std::uint64_t fingerprint,
                                  const std::function<void(dnnl::memory&)>& fill) {
  if (cache != nullptr) return cache->obtain(desc, fingerprint, fill);
  dnnl::memory m(desc, DnnlContext::instance().engine());
  fill(m);
  return m;
}

std::uint64_t WeightCache::identity(const Tensor& t) const {
  std::uint64_t h = mix(0, static_cast<std::uint64_t>(t.dtype()));
  for (std::int64_t d : t.shape().dims()) h = mix(h, static_cast<std::uint64_t>(d));
  const auto* bytes = static_cast<const std::byte*>(t.data());
  if (!source_.empty() && bytes >= source_.data() &&
      bytes + t.nbytes() <= source_.data() + source_.size()) {
    return mix(h, static_cast<std::uint64_t>(bytes - source_.data()));
  }
  const std::int64_t n = t.numel();
  const std::size_t size = dtype_size(t.dtype());
  constexpr std::int64_t kSamples = 16;
  for (std::int64_t s = 0; s < std::min(n, kSamples); ++s) {
    const std::int64_t at = n <= kSamples ? s : s * (n - 1) / (kSamples - 1);
    std::uint64_t v = 0;
    std::memcpy(&v, bytes + static_cast<std::size_t>(at) * size, std::min(size, sizeof v));
    h = mix(h, v);
  }
  return mix(h, 1);
}

std::uint64_t weight_identity(const WeightCache* cache, const Tensor& t) {
  return cache != nullptr ? cache->identity(t) : 0;
}

std::uint64_t combine_identity(std::uint64_t seed, std::uint64_t value) {
  return mix(seed, value);
}

}  // namespace cpufold
