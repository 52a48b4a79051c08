#include "io/blob_cache_file.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "io/atomic_file.h"
#include "memory/error.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> kMagic = {'C', 'P', 'F', 'B', 'L', 'O', 'B', '\n'};
// Bump when the layout below changes: older files are then rebuilt, never misread.
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kBlobAlignment = 64;
constexpr std::size_t kDataAlignment = 4096;
// Checked bytes after which the check's pages leave this process's memory again: reading a
// few hundred MB to verify them must not keep them resident beside the caller's own copies
// (a process that builds the cache holds its packed weights while it checks the file).
constexpr std::size_t kCheckWindow = std::size_t{32} << 20;

struct Header {
  std::array<char, 8> magic;
  std::uint32_t version;
  std::uint32_t blob_count;
  std::uint64_t key_bytes;
  std::uint64_t index_bytes;
  std::uint64_t data_offset;  // from the start of the file
  std::uint64_t data_bytes;
  std::uint64_t index_checksum;  // over key and index
  std::uint64_t data_checksum;   // over every blob's bytes, in order
};

// Per blob in the index, followed by its meta bytes.
struct IndexEntry {
  std::uint64_t offset;  // from data_offset
  std::uint64_t bytes;
  std::uint64_t meta_bytes;
};

std::size_t align_to(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}

// A 64-bit hash fast enough to check a few hundred MB on every load (four independent
// multiply-rotate lanes over 8-byte words); it detects corruption, it is not cryptographic.
class Checksum {
 public:
  void add(std::span<const std::byte> bytes) {
    const std::byte* p = bytes.data();
    std::size_t n = bytes.size();
    while (n >= 32) {
      for (int l = 0; l < 4; ++l) {
        std::uint64_t v;
        std::memcpy(&v, p + 8 * l, 8);
        lanes_[l] = mix(lanes_[l] ^ v);
      }
      p += 32;
      n -= 32;
    }
    for (; n > 0; --n, ++p) lanes_[0] = mix(lanes_[0] ^ static_cast<std::uint64_t>(*p));
    total_ += bytes.size();
  }
  void add(std::string_view s) { add(std::as_bytes(std::span(s.data(), s.size()))); }
  std::uint64_t value() const {
    std::uint64_t h = total_;
    for (std::uint64_t l : lanes_) h = mix(h ^ l);
    return h;
  }

 private:
  static std::uint64_t mix(std::uint64_t x) {
    x *= 0x9E3779B97F4A7C15ull;
    return (x << 31 | x >> 33) * 0xC2B2AE3D27D4EB4Full;
  }
  std::array<std::uint64_t, 4> lanes_ = {1, 2, 3, 4};
  std::uint64_t total_ = 0;
};

template <typename T>
std::string_view bytes_of(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof(T)};
}

}  // namespace

void write_blob_cache(const fs::path& path, std::string_view key, std::span<const Blob> blobs) {
  std::string index;
  std::size_t data_bytes = 0;
  Checksum data_sum;
  for (const Blob& b : blobs) {
    data_bytes = align_to(data_bytes, kBlobAlignment);
    const IndexEntry e{data_bytes, b.data.size(), b.meta.size()};
    index += bytes_of(e);
    index += b.meta;
    data_bytes += b.data.size();
    data_sum.add(b.data);
  }
  Checksum index_sum;
  index_sum.add(key);
  index_sum.add(index);
  Header h{};
  h.magic = kMagic;
  h.version = kFormatVersion;
  h.blob_count = static_cast<std::uint32_t>(blobs.size());
  h.key_bytes = key.size();
  h.index_bytes = index.size();
  h.data_offset = align_to(sizeof(Header) + key.size() + index.size(), kDataAlignment);
  h.data_bytes = data_bytes;
  h.index_checksum = index_sum.value();
  h.data_checksum = data_sum.value();

  std::string head;
  head += bytes_of(h);
  head += key;
  head += index;
  head.resize(h.data_offset, '\0');
  const std::string zeros(kBlobAlignment, '\0');
  std::vector<std::string_view> pieces{head};
  std::size_t at = 0;
  for (const Blob& b : blobs) {
    const std::size_t start = align_to(at, kBlobAlignment);
    if (start > at) pieces.emplace_back(zeros.data(), start - at);
    pieces.emplace_back(reinterpret_cast<const char*>(b.data.data()), b.data.size());
    at = start + b.data.size();
  }
  write_file_atomically(path, pieces);
}

namespace {

// Why a header does not describe a file of `file_size` bytes in this build's format; empty if
// it does.
std::string header_problem(const Header& h, std::size_t file_size) {
  if (h.magic != kMagic) return "not a cpufold cache file";
  if (h.version != kFormatVersion) {
    return "format version " + std::to_string(h.version) + ", this build writes " +
           std::to_string(kFormatVersion);
  }
  const std::uint64_t meta_end = sizeof h + h.key_bytes + h.index_bytes;
  if (h.key_bytes > file_size || h.index_bytes > file_size || meta_end > h.data_offset ||
      h.data_offset > file_size || h.data_bytes != file_size - h.data_offset) {
    return "truncated or inconsistent sizes";
  }
  return {};
}

// The blobs the index lists, checked against the data checksum, into cache.blobs; why not, or
// empty. Each window of data is dropped from memory once summed: a check reads it all once.
std::string read_blobs(BlobCache& cache, const Header& h, std::string_view index,
                       std::span<const std::byte> data) {
  std::size_t at = 0;
  std::size_t checked_until = 0;  // data bytes whose pages were dropped after their check
  Checksum data_sum;
  for (std::uint32_t i = 0; i < h.blob_count; ++i) {
    IndexEntry e;
    if (index.size() - at < sizeof e) return "truncated index";
    std::memcpy(&e, index.data() + at, sizeof e);
    at += sizeof e;
    if (e.meta_bytes > index.size() - at || e.offset > data.size() ||
        e.bytes > data.size() - e.offset) {
      return "index entry " + std::to_string(i) + " out of bounds";
    }
    Blob b{std::string(index.substr(at, e.meta_bytes)), data.subspan(e.offset, e.bytes)};
    at += e.meta_bytes;
    data_sum.add(b.data);
    cache.blobs.push_back(std::move(b));
    if (e.offset + e.bytes - checked_until >= kCheckWindow) {
      cache.mapping.drop_resident_pages(
          data.subspan(checked_until, e.offset + e.bytes - checked_until));
      checked_until = e.offset + e.bytes;
    }
  }
  cache.mapping.drop_resident_pages();
  if (at != index.size()) return "index size mismatch";
  if (data_sum.value() != h.data_checksum) return "data checksum mismatch";
  return {};
}

}  // namespace

BlobCacheLoad load_blob_cache(const fs::path& path, std::string_view key) {
  BlobCacheLoad out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  BlobCache cache;
  try {
    cache.mapping = MappedFile::open_read_only(path);
  } catch (const WeightsError& e) {
    out.problem = e.what();
    return out;
  }
  const auto file = cache.mapping.bytes();
  Header h;
  if (file.size() < sizeof h) {
    out.problem = "truncated header";
    return out;
  }
  std::memcpy(&h, file.data(), sizeof h);
  out.problem = header_problem(h, file.size());
  if (!out.problem.empty()) return out;
  const char* base = reinterpret_cast<const char*>(file.data());
  const std::string_view stored_key(base + sizeof h, h.key_bytes);
  const std::string_view index(base + sizeof h + h.key_bytes, h.index_bytes);
  Checksum index_sum;
  index_sum.add(stored_key);
  index_sum.add(index);
  if (index_sum.value() != h.index_checksum) {
    out.problem = "index checksum mismatch";
  } else if (stored_key != key) {
    out.problem = "made for other parameters, CPU or build";
  } else {
    out.problem = read_blobs(cache, h, index, file.subspan(h.data_offset));
  }
  if (out.problem.empty()) out.cache = std::move(cache);
  return out;
}

}  // namespace cpufold
