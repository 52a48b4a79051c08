// Maps a cpufold weights file: HDF5 is used only to find where each dataset's bytes are;
// the tensors then view a single read-only mapping of the whole file.
#include <algorithm>
#include <vector>

#include "io/hdf5_handle.h"
#include "io/hdf5_types.h"
#include "io/hdf5_weights.h"
#include "memory/error.h"

namespace cpufold {

namespace {

constexpr std::string_view kReconvert =
    "; the file may be truncated or corrupt: convert the AF2 .npz again with `cpufold "
    "convert-params`";

// Where one dataset's bytes are, read from HDF5 before the file is closed.
struct DatasetPlacement {
  std::string key;
  DType dtype = DType::f32;
  Shape shape;
  haddr_t offset = HADDR_UNDEF;
};

class Hdf5WeightsReader {
 public:
  explicit Hdf5WeightsReader(std::filesystem::path path) : path_(std::move(path)) {}

  Hdf5Weights open() {
    const H5QuietErrors quiet;
    Hdf5Weights out;
    // Map first, then check that HDF5 opened the same inode: a concurrent convert-params
    // renaming a new file into place must not mix one file's offsets with another's bytes.
    out.mapping = MappedFile::open_read_only(path_);
    const H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    // Shared read locks where supported; no failure on filesystems without locking.
    H5Pset_file_locking(fapl.get(), true, true);
    const H5Id file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
    if (!file.valid()) {
      corrupt("cannot be opened as HDF5: " + h5_error_text());
    }
    if (!out.mapping.same_file_as(path_)) {
      throw WeightsError("weights file " + path_.string() +
                         " was replaced while it was being opened; open it again");
    }
    check_no_user_block(file.get());

    out.attributes = read_string_attributes(file.get());
    check_format(out.attributes);
    for (const DatasetPlacement& p : read_placements(file.get())) {
      out.arrays.push_back({p.key, view(out.mapping, p)});
    }
    return out;
  }

 private:
  [[noreturn]] void corrupt(const std::string& what) const {
    throw WeightsError("weights file " + path_.string() + " " + what + std::string(kReconvert));
  }

  // Dataset addresses are relative to the end of a user block; we never write one.
  void check_no_user_block(hid_t file) const {
    const H5Id fcpl(H5Fget_create_plist(file), H5Pclose);
    hsize_t user_block = 0;
    if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &user_block) < 0 || user_block != 0) {
      corrupt("has an HDF5 user block, which cpufold weights files never have");
    }
  }

  void check_format(const std::map<std::string, std::string>& attributes) const {
    const auto it = attributes.find("cpufold_format");
    if (it == attributes.end()) {
      throw WeightsError(path_.string() +
                         " is an HDF5 file but not a cpufold weights file (missing "
                         "cpufold_format attribute); convert AF2 .npz parameters with `cpufold "
                         "convert-params`");
    }
    if (it->second != kCpufoldFormat) {
      throw WeightsError("weights file " + path_.string() + " has format '" + it->second +
                         "' but this cpufold reads '" + std::string(kCpufoldFormat) +
                         "'; convert the AF2 .npz again with this version's `cpufold "
                         "convert-params`");
    }
  }

  std::vector<DatasetPlacement> read_placements(hid_t file) const {
    const std::string group_name(kHdf5ParamsGroup);
    if (H5Lexists(file, group_name.c_str(), H5P_DEFAULT) <= 0) {
      corrupt("has no /" + group_name + " group");
    }
    const H5Id group(H5Gopen2(file, group_name.c_str(), H5P_DEFAULT), H5Gclose);
    H5G_info_t info{};
    if (!group.valid() || H5Gget_info(group.get(), &info) < 0) {
      corrupt("has an unreadable /" + group_name + " group: " + h5_error_text());
    }
    std::vector<DatasetPlacement> out;
    for (hsize_t i = 0; i < info.nlinks; ++i) out.push_back(read_placement(group.get(), i));
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.key < b.key; });
    return out;
  }

  DatasetPlacement read_placement(hid_t group, hsize_t index) const {
    const ssize_t length =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, nullptr, 0, H5P_DEFAULT);
    if (length <= 0) corrupt("has an unreadable link in /params: " + h5_error_text());
    std::string link(static_cast<std::size_t>(length), '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, link.data(), link.size() + 1,
                       H5P_DEFAULT);

    DatasetPlacement p;
    const auto key = decode_hdf5_key(link);
    if (!key) corrupt("has a dataset /params/" + link + " whose name is not an encoded key");
    p.key = *key;
    const std::string where = "parameter '" + p.key + "'";

    const H5Id ds(H5Dopen2(group, link.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.valid()) corrupt("has an unreadable dataset for " + where + ": " + h5_error_text());
    const H5Id type(H5Dget_type(ds.get()), H5Tclose);
    const auto dtype = dtype_from_h5(type.get());
    if (!dtype) corrupt("stores " + where + " with an element type cpufold cannot map");
    p.dtype = *dtype;

    const H5Id space(H5Dget_space(ds.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > Shape::kMaxRank) corrupt("stores " + where + " with a bad rank");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    for (hsize_t d : dims) p.shape.push_back(static_cast<std::int64_t>(d));

    const H5Id dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
    if (H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl.get()) != 0 ||
        H5Pget_external_count(dcpl.get()) != 0) {
      corrupt("stores " + where + " chunked, compressed or external, which cannot be mapped");
    }
    p.offset = H5Dget_offset(ds.get());
    return p;
  }

  Tensor view(const MappedFile& mapping, const DatasetPlacement& p) const {
    const std::size_t bytes = static_cast<std::size_t>(p.shape.numel()) * dtype_size(p.dtype);
    if (bytes == 0) return Tensor(zero_element_data(), p.dtype, p.shape);
    const std::string where = "parameter '" + p.key + "'";
    if (p.offset == HADDR_UNDEF) corrupt("has no data stored for " + where);
    if (p.offset > mapping.size() || bytes > mapping.size() - p.offset) {
      corrupt("stores " + where + " at bytes [" + std::to_string(p.offset) + ", " +
              std::to_string(p.offset + bytes) + "), beyond its end (" +
              std::to_string(mapping.size()) + " bytes)");
    }
    if (p.offset % dtype_size(p.dtype) != 0) {
      corrupt("stores " + where + " at a misaligned offset " + std::to_string(p.offset));
    }
    // Read-only by contract: the mapping is PROT_READ, so a write faults.
    auto* data = const_cast<std::byte*>(mapping.data() + p.offset);
    return Tensor(data, p.dtype, p.shape);
  }

  std::filesystem::path path_;
};

}  // namespace

Hdf5Weights open_hdf5_weights(const std::filesystem::path& path) {
  return Hdf5WeightsReader(path).open();
}

}  // namespace cpufold
