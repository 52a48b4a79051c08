#include "io/convert_params.h"

#include <unistd.h>

#include <cstring>
#include <map>
#include <string_view>
#include <system_error>

#include "io/hdf5_weights.h"
#include "io/npz_reader.h"
#include "memory/error.h"

namespace cpufold {

namespace {

namespace fs = std::filesystem;

// Removes the temporary file unless it was renamed into place.
class TempFile {
 public:
  explicit TempFile(fs::path path) : path_(std::move(path)) {}
  ~TempFile() {
    std::error_code ec;
    if (!path_.empty()) fs::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// HDF5 layout quirks must never reach a model silently: compare every array bit for bit.
void verify_copy(const NpzContents& src, const fs::path& written, const fs::path& npz) {
  const Hdf5Weights copy = open_hdf5_weights(written);
  std::map<std::string_view, const Tensor*> by_key;
  for (const NamedTensor& b : copy.arrays) by_key[b.key] = &b.tensor;
  if (by_key.size() != src.arrays.size()) {
    throw WeightsError("converting " + npz.string() + ": " + written.string() + " holds " +
                       std::to_string(by_key.size()) + " arrays but the .npz " +
                       std::to_string(src.arrays.size()));
  }
  for (const NamedTensor& a : src.arrays) {
    const auto it = by_key.find(a.key);
    if (it == by_key.end() || !same_bits(*it->second, a.tensor)) {
      throw WeightsError("converting " + npz.string() + ": parameter '" + a.key +
                         "' reads back differently from " + written.string() +
                         "; the output file system may be faulty");
    }
  }
}

}  // namespace

void convert_params(const fs::path& npz, const fs::path& out_h5, const std::string& preset) {
  const fs::path dir = out_h5.parent_path().empty() ? fs::path(".") : out_h5.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError("cannot write " + out_h5.string() + ": directory " + dir.string() +
                     " does not exist");
  }
  const NpzContents src = read_npz(npz);

  const std::map<std::string, std::string> attributes = {
      {"source_file", npz.filename().string()},
      {"preset", preset},
  };
  // Same directory as the target, so the rename is atomic (one file system).
  TempFile tmp(fs::path(out_h5.string() + ".tmp-" + std::to_string(::getpid())));
  write_hdf5_weights(tmp.path(), src.arrays, attributes);
  verify_copy(src, tmp.path(), npz);

  fs::rename(tmp.path(), out_h5, ec);
  if (ec) {
    throw InputError("cannot move " + tmp.path().string() + " to " + out_h5.string() + ": " +
                     ec.message());
  }
  tmp.release();
}

}  // namespace cpufold
