// Named tensors in HDF5 files: reading feature files (the reference's `inputs/` layout) and
// writing outputs and traces. Dataset names are paths ("outputs/pair"); groups are implicit.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "memory/tensor.h"

namespace cpufold {

class Hdf5TensorReader {
 public:
  // Throws InputError naming the file when it is missing or not HDF5.
  explicit Hdf5TensorReader(const std::filesystem::path& path);
  ~Hdf5TensorReader();
  Hdf5TensorReader(const Hdf5TensorReader&) = delete;
  Hdf5TensorReader& operator=(const Hdf5TensorReader&) = delete;

  bool has(const std::string& name) const;
  // Throws InputError naming the dataset and the file when it is missing.
  Shape shape(const std::string& name) const;
  // Reads a numeric dataset into `dst` (contiguous, f32 / i32 / i64; HDF5 converts the element
  // type). The shapes must be equal.
  void read(const std::string& name, const Tensor& dst) const;
  // Index `index` of the dataset's last axis (e.g. one recycling iteration of a feature) into
  // `dst`, whose shape is the dataset's without that axis; only that slice is read.
  void read_last_axis_index(const std::string& name, std::int64_t index, const Tensor& dst) const;
  // Whole dataset as float, for tests and small inputs.
  std::vector<float> read_f32(const std::string& name) const;
  // Names of the members of a group (datasets and groups), sorted.
  std::vector<std::string> members(const std::string& group) const;
  // Full paths of every dataset below `group` (recursively), sorted.
  std::vector<std::string> datasets_under(const std::string& group) const;
  // A string attribute of the root group; empty when absent.
  std::string root_attribute(const std::string& name) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  long long file_ = -1;  // hid_t
};

// Writes to a temporary file beside `path` and renames it into place on commit(), so readers
// never see a half-written file. Without commit() the temporary is removed.
class Hdf5TensorWriter {
 public:
  explicit Hdf5TensorWriter(std::filesystem::path path);
  ~Hdf5TensorWriter();
  Hdf5TensorWriter(const Hdf5TensorWriter&) = delete;
  Hdf5TensorWriter& operator=(const Hdf5TensorWriter&) = delete;

  // Any strides; f32, i32, i64 or u8. Intermediate groups are created.
  void write(const std::string& name, const Tensor& src);
  bool has(const std::string& name) const;
  void set_root_attribute(const std::string& name, const std::string& value);
  void commit();

 private:
  void close();
  std::filesystem::path path_, tmp_path_;
  long long file_ = -1;  // hid_t
};

}  // namespace cpufold
