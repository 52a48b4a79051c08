// WeightStore: AlphaFold2 parameters by name, from an AF2 `.npz` or a cpufold HDF5 file.
// Keys are AF2's: `alphafold/alphafold_iteration/<scope>//<name>`; repeated blocks are stacked
// on axis 0. Views returned are read-only by contract (HDF5 files are mapped PROT_READ).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memory/tensor.h"

namespace cpufold {

class WeightStore {
 public:
  enum class Format { npz, hdf5 };

  // Opens a `.npz` (AF2) or cpufold `.h5` file; the format is detected from the file's magic
  // bytes. Throws WeightsError naming the file (and the entry) when it cannot be read, and
  // naming the parameter, the count and the first index when any value is NaN or Inf.
  static WeightStore open(const std::filesystem::path& path);

  WeightStore(WeightStore&&) noexcept;
  WeightStore& operator=(WeightStore&&) noexcept;
  ~WeightStore();

  // A view of `key` checked against `expected` shape; marks the key used. Throws WeightsError
  // naming the key and the file when it is missing, and the key and both shapes on mismatch.
  Tensor require(std::string_view key, const Shape& expected) const;
  // Like require, without a shape check (for callers that derive shapes from the file).
  Tensor get(std::string_view key) const;
  bool contains(std::string_view key) const;
  // Shape of a key; throws like require when missing.
  const Shape& shape_of(std::string_view key) const;
  DType dtype_of(std::string_view key) const;

  // Call once the model holds (or maps) everything it needs: the values leave this process's
  // memory. HDF5: the mapped pages leave RSS (a later read faults them back in from the page
  // cache, unchanged). npz: the arrays are freed and a later require/get throws
  // InternalError. Keys, shapes and unused_keys() stay.
  void release_values();
  // HDF5: the mapped pages read so far leave this process's memory (reads fault them back in,
  // unchanged). npz: nothing (its values are this process's own memory).
  void drop_resident_pages() const;

  // Every value's bytes: the mapped HDF5 file, or the npz arrays' storage.
  std::span<const std::byte> bytes() const;

  std::vector<std::string> keys() const;         // sorted
  std::vector<std::string> unused_keys() const;  // keys no require/get has touched, sorted
  std::int64_t parameter_count() const;          // total elements over all keys

  const std::filesystem::path& path() const;
  Format format() const;
  // Attributes stored in a cpufold HDF5 file (source file name, preset); empty for npz.
  const std::map<std::string, std::string>& attributes() const;

  struct Impl;

 private:
  explicit WeightStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The common key prefix of AF2 parameter names.
inline constexpr std::string_view kAf2Prefix = "alphafold/alphafold_iteration/";

}  // namespace cpufold
