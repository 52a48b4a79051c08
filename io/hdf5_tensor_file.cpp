#include "io/hdf5_tensor_file.h"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>

#include "io/hdf5_handle.h"
#include "io/hdf5_types.h"
#include "memory/error.h"
#include "memory/tensor_copy.h"

namespace cpufold {
namespace {

// Every path component must exist for H5Lexists not to fail.
bool link_exists(hid_t file, const std::string& name) {
  std::size_t pos = 0;
  while (true) {
    pos = name.find('/', pos + 1);
    const std::string prefix = name.substr(0, pos);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (pos == std::string::npos) return true;
  }
}

// Copies a possibly strided tensor into contiguous bytes.
std::vector<std::byte> gather(const Tensor& t) {
  std::vector<std::byte> out(t.nbytes());
  copy_tensor(t, Tensor(out.data(), t.dtype(), t.shape()));
  return out;
}

}  // namespace

Hdf5TensorReader::Hdf5TensorReader(const std::filesystem::path& path) : path_(path) {
  if (!std::filesystem::exists(path)) throw InputError("file " + path.string() + " does not exist");
  H5E_BEGIN_TRY {
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  }
  H5E_END_TRY;
  if (file_ < 0) throw InputError(path.string() + " is not a readable HDF5 file");
}

Hdf5TensorReader::~Hdf5TensorReader() {
  if (file_ >= 0) H5Fclose(file_);
}

bool Hdf5TensorReader::has(const std::string& name) const {
  bool found = false;
  H5E_BEGIN_TRY {
    found = link_exists(file_, name);
  }
  H5E_END_TRY;
  return found;
}

Shape Hdf5TensorReader::shape(const std::string& name) const {
  if (!has(name)) {
    throw InputError("dataset '" + name + "' is missing from " + path_.string());
  }
  H5Id ds(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw InputError("'" + name + "' in " + path_.string() + " is not a dataset");
  H5Id space(H5Dget_space(ds.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > Shape::kMaxRank) {
    throw InputError("dataset '" + name + "' in " + path_.string() + " has unsupported rank");
  }
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  Shape s;
  for (hsize_t d : dims) s.push_back(static_cast<std::int64_t>(d));
  return s;
}

void Hdf5TensorReader::read(const std::string& name, const Tensor& dst) const {
  const Shape s = shape(name);
  if (!(s == dst.shape())) {
    throw InputError("dataset '" + name + "' in " + path_.string() + " has shape " + s.str() +
                     ", expected " + dst.shape().str());
  }
  if (!dst.is_contiguous()) throw InternalError("HDF5 read into a non-contiguous tensor");
  H5Id ds(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (H5Dread(ds.get(), h5_memory_type(dst.dtype()), H5S_ALL, H5S_ALL, H5P_DEFAULT, dst.data()) <
      0) {
    throw InputError("cannot read dataset '" + name + "' from " + path_.string() + " as " +
                     std::string(dtype_name(dst.dtype())));
  }
}

void Hdf5TensorReader::read_last_axis_index(const std::string& name, std::int64_t index,
                                            const Tensor& dst) const {
  const Shape s = shape(name);
  const int rank = s.rank();
  Shape rest;
  for (int a = 0; a + 1 < rank; ++a) rest.push_back(s[a]);
  if (rank == 0 || index < 0 || index >= s[rank - 1] || !(rest == dst.shape())) {
    throw InputError("dataset '" + name + "' in " + path_.string() + " has shape " + s.str() +
                     ": cannot read index " + std::to_string(index) + " of its last axis as " +
                     dst.shape().str());
  }
  if (!dst.is_contiguous()) throw InternalError("HDF5 read into a non-contiguous tensor");
  H5Id ds(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Id file_space(H5Dget_space(ds.get()), H5Sclose);
  std::vector<hsize_t> start(static_cast<std::size_t>(rank), 0),
      count(s.dims().begin(), s.dims().end());
  start.back() = static_cast<hsize_t>(index);
  count.back() = 1;
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                      nullptr);
  const hsize_t n = static_cast<hsize_t>(dst.numel());
  H5Id memory_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (H5Dread(ds.get(), h5_memory_type(dst.dtype()), memory_space.get(), file_space.get(),
              H5P_DEFAULT, dst.data()) < 0) {
    throw InputError("cannot read dataset '" + name + "' from " + path_.string() + " as " +
                     std::string(dtype_name(dst.dtype())));
  }
}

std::vector<float> Hdf5TensorReader::read_f32(const std::string& name) const {
  const Shape s = shape(name);
  std::vector<float> out(static_cast<std::size_t>(s.numel()));
  read(name, Tensor(out.data(), DType::f32, s));
  return out;
}

std::vector<std::string> Hdf5TensorReader::members(const std::string& group) const {
  if (!has(group)) throw InputError("group '" + group + "' is missing from " + path_.string());
  H5Id g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose);
  H5G_info_t info;
  H5Gget_info(g.get(), &info);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len =
        H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string n(static_cast<std::size_t>(len), '\0');
    H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, n.data(), n.size() + 1,
                       H5P_DEFAULT);
    names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Hdf5TensorReader::datasets_under(const std::string& group) const {
  std::vector<std::string> out;
  for (const std::string& name : members(group)) {
    const std::string path = group + "/" + name;
    H5O_info_t info;
    if (H5Oget_info_by_name(file_, path.c_str(), &info, H5P_DEFAULT) < 0) continue;
    if (info.type == H5O_TYPE_DATASET) {
      out.push_back(path);
    } else if (info.type == H5O_TYPE_GROUP) {
      for (std::string& sub : datasets_under(path)) out.push_back(std::move(sub));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Hdf5TensorReader::root_attribute(const std::string& name) const {
  const auto attrs = read_string_attributes(file_);
  const auto it = attrs.find(name);
  return it == attrs.end() ? std::string() : it->second;
}

Hdf5TensorWriter::Hdf5TensorWriter(std::filesystem::path path)
    : path_(std::move(path)), tmp_path_(path_.string() + ".tmp-" + std::to_string(::getpid())) {
  H5QuietErrors quiet;
  file_ = H5Fcreate(tmp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) throw InputError("cannot create " + tmp_path_.string());
}

Hdf5TensorWriter::~Hdf5TensorWriter() {
  if (file_ >= 0) {
    close();
    std::error_code ec;
    std::filesystem::remove(tmp_path_, ec);
  }
}

void Hdf5TensorWriter::close() {
  H5Fclose(file_);
  file_ = -1;
}

bool Hdf5TensorWriter::has(const std::string& name) const {
  bool found = false;
  H5E_BEGIN_TRY {
    found = link_exists(file_, name);
  }
  H5E_END_TRY;
  return found;
}

void Hdf5TensorWriter::write(const std::string& name, const Tensor& src) {
  if (has(name)) throw InternalError("dataset '" + name + "' written twice");
  std::vector<hsize_t> dims(src.shape().dims().begin(), src.shape().dims().end());
  H5Id space(H5Screate_simple(src.rank(), dims.data(), nullptr), H5Sclose);
  H5Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  const hid_t type = h5_memory_type(src.dtype());
  H5Id ds(H5Dcreate2(file_, name.c_str(), type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
          H5Dclose);
  // A contiguous tensor is written in place: a copy of the largest output (the MSA
  // representation, 128 MiB at 256 residues) would be the run's peak.
  std::vector<std::byte> bytes;
  const void* data = src.data();
  if (!src.is_contiguous()) {
    bytes = gather(src);
    data = bytes.data();
  }
  if (!ds.valid() || H5Dwrite(ds.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    throw InputError("cannot write dataset '" + name + "' to " + tmp_path_.string());
  }
}

void Hdf5TensorWriter::set_root_attribute(const std::string& name, const std::string& value) {
  if (H5Aexists(file_, name.c_str()) > 0) H5Adelete(file_, name.c_str());
  if (!write_string_attribute(file_, name, value)) {
    throw InputError("cannot write attribute '" + name + "' to " + tmp_path_.string());
  }
}

void Hdf5TensorWriter::commit() {
  if (file_ < 0) throw InternalError("HDF5 writer committed twice");
  H5Fflush(file_, H5F_SCOPE_GLOBAL);
  close();
  std::error_code ec;
  std::filesystem::rename(tmp_path_, path_, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp_path_, ignored);  // the whole output: never left behind
    throw InputError("cannot move " + tmp_path_.string() + " to " + path_.string() + ": " +
                     ec.message());
  }
}

}  // namespace cpufold
