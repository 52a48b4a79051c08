#include "io/hdf5_types.h"

#include <vector>

#include "io/hdf5_handle.h"
#include "memory/error.h"

namespace cpufold {

hid_t h5_file_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return H5T_IEEE_F32LE;
    case DType::i32:
      return H5T_STD_I32LE;
    case DType::i64:
      return H5T_STD_I64LE;
    case DType::u8:
      return H5T_STD_U8LE;
    case DType::bf16:
      break;
  }
  throw InternalError("no HDF5 type for dtype " + std::string(dtype_name(dtype)));
}

hid_t h5_memory_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return H5T_NATIVE_FLOAT;
    case DType::i32:
      return H5T_NATIVE_INT32;
    case DType::i64:
      return H5T_NATIVE_INT64;
    case DType::u8:
      return H5T_NATIVE_UINT8;
    case DType::bf16:
      break;
  }
  throw InternalError("no HDF5 type for dtype " + std::string(dtype_name(dtype)));
}

std::optional<DType> dtype_from_h5(hid_t type) {
  // Exact equality: a mapped view must have the very byte layout we compute with.
  for (DType d : {DType::f32, DType::i32, DType::i64, DType::u8}) {
    if (H5Tequal(type, h5_file_type(d)) > 0) return d;
  }
  return std::nullopt;
}

bool write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  const H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  const H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  if (!type.valid() || !space.valid()) return false;
  // Variable-length UTF-8: h5py reads these as str rather than bytes.
  if (H5Tset_size(type.get(), H5T_VARIABLE) < 0 || H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    return false;
  }
  const H5Id attr(
      H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  const char* text = value.c_str();
  return attr.valid() && H5Awrite(attr.get(), type.get(), &text) >= 0;
}

namespace {

std::optional<std::string> read_string(hid_t attr) {
  const H5Id file_type(H5Aget_type(attr), H5Tclose);
  const H5Id space(H5Aget_space(attr), H5Sclose);
  if (H5Tget_class(file_type.get()) != H5T_STRING || H5Sget_simple_extent_npoints(space.get()) != 1)
    return std::nullopt;
  // The memory type must match the stored character set, or HDF5 finds no conversion.
  const H5Id mem_type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_cset(mem_type.get(), H5Tget_cset(file_type.get()));
  if (H5Tis_variable_str(file_type.get()) > 0) {
    H5Tset_size(mem_type.get(), H5T_VARIABLE);
    char* text = nullptr;
    if (H5Aread(attr, mem_type.get(), &text) < 0 || text == nullptr) return std::nullopt;
    std::string value(text);
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(file_type.get());
  H5Tset_size(mem_type.get(), size + 1);
  H5Tset_strpad(mem_type.get(), H5T_STR_NULLTERM);
  std::vector<char> buffer(size + 1, '\0');
  if (H5Aread(attr, mem_type.get(), buffer.data()) < 0) return std::nullopt;
  return std::string(buffer.data());
}

}  // namespace

std::map<std::string, std::string> read_string_attributes(hid_t object) {
  std::map<std::string, std::string> out;
  auto visit = [](hid_t loc, const char* name, const H5A_info_t*, void* data) -> herr_t {
    const H5Id attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    if (!attr.valid()) return 0;
    if (auto value = read_string(attr.get())) {
      (*static_cast<std::map<std::string, std::string>*>(data))[name] = std::move(*value);
    }
    return 0;
  };
  H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, visit, &out);
  return out;
}

}  // namespace cpufold
