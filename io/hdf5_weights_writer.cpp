// Writes the cpufold weights layout described in hdf5_weights.h.
#include <vector>

#include "io/hdf5_handle.h"
#include "io/hdf5_types.h"
#include "io/hdf5_weights.h"
#include "memory/error.h"

namespace cpufold {

namespace {

// Datasets start on 64-byte boundaries, so every mapped view is aligned for SIMD loads.
constexpr hsize_t kFileAlignment = 64;
constexpr const char* kKeyEncoding =
    "one dataset per AF2 key in the flat group /params; link name = key with '%' -> %25, "
    "'/' -> %2F";

class Hdf5WeightsWriter {
 public:
  explicit Hdf5WeightsWriter(std::filesystem::path path) : path_(std::move(path)) {}

  void write(std::span<const NamedTensor> arrays,
             const std::map<std::string, std::string>& attributes) {
    const H5QuietErrors quiet;
    const H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    check(fapl.valid() && H5Pset_alignment(fapl.get(), 1, kFileAlignment) >= 0,
          "cannot set up file access");
    H5Id file(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    check(file.valid(), "cannot create the file");

    check(write_string_attribute(file.get(), "cpufold_format", std::string(kCpufoldFormat)),
          "cannot write attribute cpufold_format");
    check(write_string_attribute(file.get(), "key_encoding", kKeyEncoding),
          "cannot write attribute key_encoding");
    for (const auto& [name, value] : attributes) {
      if (name == "cpufold_format" || name == "key_encoding") continue;
      check(write_string_attribute(file.get(), name, value), "cannot write attribute " + name);
    }

    const std::string group_name(kHdf5ParamsGroup);
    const H5Id group(
        H5Gcreate2(file.get(), group_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Gclose);
    check(group.valid(), "cannot create group /" + group_name);
    for (const NamedTensor& a : arrays) write_dataset(group.get(), a);

    // Closing flushes; a failure here (disk full) means the file is incomplete.
    check(file.close() >= 0, "cannot flush and close the file");
  }

 private:
  void check(bool ok, const std::string& what) const {
    if (!ok) {
      throw WeightsError("cannot write weights file " + path_.string() + ": " + what + ": " +
                         h5_error_text());
    }
  }

  void write_dataset(hid_t group, const NamedTensor& a) const {
    const Tensor& t = a.tensor;
    if (!t.is_contiguous()) {
      throw InternalError("write_hdf5_weights: parameter '" + a.key + "' is not contiguous");
    }
    const std::string where = "parameter '" + a.key + "'";
    std::vector<hsize_t> dims(t.shape().dims().begin(), t.shape().dims().end());
    const H5Id space(
        t.rank() == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(t.rank(), dims.data(), nullptr),
        H5Sclose);
    check(space.valid(), "cannot create the dataspace of " + where);

    // Contiguous and allocated at creation: the data has a file offset even before (or
    // without) a write, and never gets chunked or filtered.
    const H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    check(dcpl.valid() && H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS) >= 0 &&
              H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) >= 0 &&
              H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) >= 0,
          "cannot set the layout of " + where);

    const std::string link = encode_hdf5_key(a.key);
    const H5Id ds(H5Dcreate2(group, link.c_str(), h5_file_type(t.dtype()), space.get(), H5P_DEFAULT,
                             dcpl.get(), H5P_DEFAULT),
                  H5Dclose);
    check(ds.valid(), "cannot create the dataset of " + where);
    if (t.numel() > 0) {
      check(H5Dwrite(ds.get(), h5_memory_type(t.dtype()), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                     t.data()) >= 0,
            "cannot write " + where);
    }
  }

  std::filesystem::path path_;
};

}  // namespace

void write_hdf5_weights(const std::filesystem::path& path, std::span<const NamedTensor> arrays,
                        const std::map<std::string, std::string>& attributes) {
  Hdf5WeightsWriter(path).write(arrays, attributes);
}

}  // namespace cpufold
