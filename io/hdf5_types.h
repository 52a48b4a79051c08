// Mapping between cpufold dtypes and HDF5 types, and string attributes: the pieces of HDF5
// the weights writer and reader share.
#pragma once

#include <hdf5.h>

#include <map>
#include <optional>
#include <string>

#include "memory/dtype.h"

namespace cpufold {

// The little-endian file type we store a dtype as (bf16 has no HDF5 type: InternalError).
hid_t h5_file_type(DType dtype);
hid_t h5_memory_type(DType dtype);
// The dtype a dataset's type maps to, or nullopt (big-endian, float64, compound, ...).
std::optional<DType> dtype_from_h5(hid_t type);

// Writes a scalar variable-length UTF-8 string attribute; returns false when HDF5 fails.
bool write_string_attribute(hid_t object, const std::string& name, const std::string& value);
// Every scalar string attribute of `object` (fixed or variable length); others are skipped.
std::map<std::string, std::string> read_string_attributes(hid_t object);

}  // namespace cpufold
