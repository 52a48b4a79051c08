#include "io/npz_reader.h"

#include <sys/mman.h>
#include <zip.h>

#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/npy.h"
#include "memory/arena.h"
#include "memory/error.h"

namespace cpufold {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCorruptHint =
    "; the file may be truncated or corrupt: download or copy it again";

struct ZipDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }  // read-only: never write back
};
struct ZipFclose {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipDiscard>;
using ZipEntry = std::unique_ptr<zip_file_t, ZipFclose>;

// Where one entry's array goes: found by a first pass over headers only, so that a single
// region of the exact total size can be allocated before any data is read.
struct EntryPlan {
  zip_uint64_t index = 0;
  std::string name;  // "x.npy"
  std::string key;   // "x"
  NpyHeader header;
  std::size_t offset = 0;  // in the storage region
};

class NpzLoader {
 public:
  explicit NpzLoader(fs::path path) : path_(std::move(path)) {}

  NpzContents load() {
    open_archive();
    std::vector<EntryPlan> plans;
    std::set<std::string> seen;
    std::size_t total = 0;
    const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      auto plan = plan_entry(static_cast<zip_uint64_t>(i));
      if (!plan) continue;
      if (!seen.insert(plan->key).second) {
        throw WeightsError("parameter file " + path_.string() + " holds the array '" + plan->name +
                           "' twice" + std::string(kCorruptHint));
      }
      plan->offset = align_up(total);
      total = plan->offset + plan->header.loaded_bytes();
      plans.push_back(std::move(*plan));
    }

    NpzContents out;
    out.storage = dram_tier().allocate(total);
    for (const EntryPlan& plan : plans) {
      const std::size_t bytes = plan.header.loaded_bytes();
      std::byte* dst = bytes == 0 ? static_cast<std::byte*>(zero_element_data())
                                  : out.storage.data() + plan.offset;
      if (bytes != 0) load_entry(plan, {dst, bytes});
      out.arrays.push_back({plan.key, Tensor(dst, plan.header.dtype, plan.header.shape)});
    }
    // Weights are read-only by contract; enforce it so a stray write faults instead of
    // silently corrupting a parameter. DRAM-tier regions are page-aligned mappings.
    if (out.storage.size() != 0) ::mprotect(out.storage.data(), out.storage.size(), PROT_READ);
    return out;
  }

 private:
  std::string entry_source(const std::string& name) const {
    return "array '" + name + "' in parameter file " + path_.string();
  }

  void open_archive() {
    std::error_code ec;
    if (!fs::exists(path_, ec)) {
      throw WeightsError("parameter file " + path_.string() + " does not exist");
    }
    int code = 0;
    zip_t* z = zip_open(path_.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (z == nullptr) {
      zip_error_t error;
      zip_error_init_with_code(&error, code);
      const std::string what = zip_error_strerror(&error);
      zip_error_fini(&error);
      throw WeightsError("cannot read parameter file " + path_.string() +
                         " as a zip archive (.npz): " + what + std::string(kCorruptHint));
    }
    zip_.reset(z);
  }

  ZipEntry open_entry(zip_uint64_t index, const std::string& name) {
    zip_file_t* f = zip_fopen_index(zip_.get(), index, 0);
    if (f == nullptr) {
      throw WeightsError("cannot read " + entry_source(name) + ": " + zip_strerror(zip_.get()) +
                         std::string(kCorruptHint));
    }
    return ZipEntry(f);
  }

  // Reads until `dst` is full or the entry ends; returns the bytes read. libzip verifies the
  // entry's CRC when a read reaches its end, so a mismatch surfaces here as an error.
  std::size_t read_some(zip_file_t* f, std::span<std::byte> dst, const std::string& name) {
    std::size_t done = 0;
    while (done < dst.size()) {
      const zip_int64_t got = zip_fread(f, dst.data() + done, dst.size() - done);
      if (got < 0) {
        throw WeightsError("cannot read " + entry_source(name) + ": " + zip_file_strerror(f) +
                           std::string(kCorruptHint));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  [[noreturn]] void truncated(const std::string& name, const std::string& what) {
    throw WeightsError(entry_source(name) + " is truncated: " + what + std::string(kCorruptHint));
  }

  std::optional<EntryPlan> plan_entry(zip_uint64_t index) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip_.get(), index, 0, &st) != 0 || (st.valid & ZIP_STAT_NAME) == 0) {
      throw WeightsError("cannot read entry " + std::to_string(index) + " of parameter file " +
                         path_.string() + ": " + zip_strerror(zip_.get()) +
                         std::string(kCorruptHint));
    }
    const std::string name = st.name;
    if (name.ends_with('/')) return std::nullopt;  // a directory entry holds no array
    if (!name.ends_with(".npy") || name.size() == 4) {
      throw WeightsError("entry '" + name + "' in parameter file " + path_.string() +
                         " is not a .npy array; an AF2 .npz holds only .npy entries");
    }
    const std::string source = entry_source(name);
    const std::size_t entry_size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;

    ZipEntry f = open_entry(index, name);
    std::vector<std::byte> head(kNpyPreambleBytes);
    head.resize(read_some(f.get(), head, name));
    const std::size_t header_size = npy_header_size(head, source);
    const std::size_t have = head.size();
    if (have < header_size) {
      head.resize(header_size);
      const std::span<std::byte> rest = std::span(head).subspan(have);
      if (read_some(f.get(), rest, name) < rest.size())
        truncated(name, "it ends inside the header");
    }

    EntryPlan plan;
    plan.index = index;
    plan.name = name;
    plan.key = name.substr(0, name.size() - 4);
    plan.header = parse_npy_header(head, source);
    const std::size_t want = header_size + plan.header.stored_bytes();
    if (entry_size < want) {
      truncated(name, "its header promises " + std::to_string(plan.header.stored_bytes()) +
                          " bytes of data for shape " + plan.header.shape.str() +
                          " but the entry holds " +
                          std::to_string(entry_size > header_size ? entry_size - header_size : 0));
    }
    if (entry_size > want) {
      throw WeightsError(source + " has " + std::to_string(entry_size - want) +
                         " unexpected bytes after the data its header describes");
    }
    return plan;
  }

  void load_entry(const EntryPlan& plan, std::span<std::byte> dst) {
    ZipEntry f = open_entry(plan.index, plan.name);
    std::vector<std::byte> skip(plan.header.data_offset);
    if (read_some(f.get(), skip, plan.name) < skip.size()) {
      truncated(plan.name, "it ends inside the header");
    }
    const std::size_t stored = plan.header.stored_bytes();
    // f16 and Fortran-order arrays go through a temporary and are converted; everything else
    // lands in place.
    const bool convert = plan.header.needs_conversion();
    std::vector<std::byte> staging(convert ? stored : 0);
    const std::span<std::byte> target = convert ? std::span(staging) : dst;
    const std::size_t got = read_some(f.get(), target, plan.name);
    if (got < stored) {
      truncated(plan.name, "it ends after " + std::to_string(got) + " of " +
                               std::to_string(stored) + " data bytes");
    }
    // One more read reaches the end of the entry, which makes libzip check the CRC.
    std::byte extra[1];
    if (read_some(f.get(), extra, plan.name) != 0) {
      throw WeightsError(entry_source(plan.name) +
                         " holds more bytes than its zip directory records" +
                         std::string(kCorruptHint));
    }
    if (convert) load_npy_data(plan.header, staging, dst);
  }

  fs::path path_;
  ZipArchive zip_;
};

}  // namespace

NpzContents read_npz(const std::filesystem::path& path) {
  return NpzLoader(path).load();
}

}  // namespace cpufold
