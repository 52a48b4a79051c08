#include "io/weight_store.h"

#include <array>
#include <cstring>
#include <fstream>
#include <mutex>

#include "io/closest_key.h"
#include "io/hdf5_weights.h"
#include "io/npz_reader.h"
#include "memory/error.h"
#include "memory/non_finite.h"

namespace cpufold {

namespace fs = std::filesystem;

struct WeightStore::Impl {
  fs::path path;
  Format format = Format::npz;
  // Exactly one of these owns the bytes the tensors view.
  Region npz_storage;
  MappedFile mapping;
  std::map<std::string, Tensor, std::less<>> tensors;
  std::map<std::string, std::string> attributes;
  std::int64_t parameter_count = 0;

  // require/get are const but record use; the mutex lets model threads share one store.
  mutable std::mutex used_mutex;
  mutable std::set<std::string, std::less<>> used;

  bool values_released = false;  // npz arrays freed by release_values

  const Tensor& find(std::string_view key) const {
    const auto it = tensors.find(key);
    if (it != tensors.end()) return it->second;
    std::string message =
        "parameter '" + std::string(key) + "' is not in parameter file " + path.string();
    std::vector<std::string> names;
    for (const auto& entry : tensors) names.push_back(entry.first);
    if (auto near = closest_key(key, names)) message += " (did you mean '" + *near + "'?)";
    throw WeightsError(message + "; is this the right model preset?");
  }

  void mark_used(std::string_view key) const {
    const std::lock_guard lock(used_mutex);
    if (used.find(key) == used.end()) used.emplace(key);
  }

  // One linear pass over every value, once per load: NaN or Inf in a parameter poisons every
  // output while the run still "succeeds", so such a file is refused here, by name.
  void check_finite() const {
    std::string first_key;
    NonFinite first;
    std::size_t bad_keys = 0;
    for (const auto& [key, tensor] : tensors) {
      const NonFinite n = find_non_finite(tensor);
      // A mapped file's pages go as soon as they are read: the check then holds one parameter
      // resident, not the whole file (356 MiB for model_1_ptm), which set a small run's peak.
      mapping.drop_resident_pages({static_cast<const std::byte*>(tensor.data()), tensor.nbytes()});
      if (n.count == 0) continue;
      if (bad_keys++ == 0) {
        first_key = key;
        first = n;
      }
    }
    if (bad_keys == 0) return;
    const Tensor& t = tensors.find(first_key)->second;
    throw WeightsError(
        "parameter file " + path.string() + ": parameter '" + first_key + "' " + t.describe() +
        " holds " + describe(first, t.shape()) +
        (bad_keys > 1 ? " (and " + std::to_string(bad_keys - 1) + " more parameter(s) hold some)"
                      : "") +
        "; the file is corrupt or comes from a diverged training run: download or convert it "
        "again");
  }

  void add(std::vector<NamedTensor> arrays) {
    for (NamedTensor& a : arrays) {
      parameter_count += a.tensor.numel();
      tensors.emplace(std::move(a.key), a.tensor);
    }
  }
};

namespace {

constexpr std::array<unsigned char, 4> kZipLocalHeader = {'P', 'K', 3, 4};
constexpr std::array<unsigned char, 4> kZipEmptyArchive = {'P', 'K', 5, 6};
constexpr std::array<unsigned char, 8> kHdf5Signature = {0x89, 'H',  'D',  'F',
                                                         '\r', '\n', 0x1a, '\n'};

template <std::size_t N>
bool starts_with(const std::string& bytes, const std::array<unsigned char, N>& magic) {
  return bytes.size() >= N && std::memcmp(bytes.data(), magic.data(), N) == 0;
}

WeightStore::Format detect_format(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw WeightsError("parameter file " + path.string() + " does not exist");
  }
  if (fs::is_directory(path, ec)) {
    throw WeightsError("parameter file " + path.string() + " is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw WeightsError("cannot read parameter file " + path.string() + ": " + std::strerror(errno));
  std::string head(kHdf5Signature.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));

  if (starts_with(head, kZipLocalHeader) || starts_with(head, kZipEmptyArchive)) {
    return WeightStore::Format::npz;
  }
  if (starts_with(head, kHdf5Signature)) return WeightStore::Format::hdf5;
  throw WeightsError("parameter file " + path.string() +
                     (head.empty() ? " is empty" : " is not a parameter file") +
                     ": it is neither an AlphaFold2 .npz (zip) nor a cpufold .h5 (HDF5) file");
}

}  // namespace

WeightStore WeightStore::open(const fs::path& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->format = detect_format(path);
  if (impl->format == Format::npz) {
    NpzContents contents = read_npz(path);
    impl->npz_storage = std::move(contents.storage);
    impl->add(std::move(contents.arrays));
  } else {
    Hdf5Weights contents = open_hdf5_weights(path);
    impl->mapping = std::move(contents.mapping);
    impl->attributes = std::move(contents.attributes);
    impl->add(std::move(contents.arrays));
  }
  impl->check_finite();
  // The check read every page; the model reads (or, with a weight cache, samples) them again
  // as it is built, so they need not stay resident meanwhile.
  impl->mapping.drop_resident_pages();
  return WeightStore(std::move(impl));
}

WeightStore::WeightStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WeightStore::WeightStore(WeightStore&&) noexcept = default;
WeightStore& WeightStore::operator=(WeightStore&&) noexcept = default;
WeightStore::~WeightStore() = default;

namespace {

void require_values(const WeightStore::Impl& impl, std::string_view key) {
  if (impl.values_released) {
    throw InternalError("parameter '" + std::string(key) + "' of " + impl.path.string() +
                        " read after the model released the file's values");
  }
}

}  // namespace

std::span<const std::byte> WeightStore::bytes() const {
  if (impl_->format == Format::hdf5) return impl_->mapping.bytes();
  return {impl_->npz_storage.data(), impl_->npz_storage.size()};
}

void WeightStore::drop_resident_pages() const {
  if (impl_->format == Format::hdf5) impl_->mapping.drop_resident_pages();
}

void WeightStore::release_values() {
  if (impl_->format == Format::hdf5) {
    drop_resident_pages();
  } else {
    impl_->npz_storage = Region();
    impl_->values_released = true;
  }
}

Tensor WeightStore::require(std::string_view key, const Shape& expected) const {
  require_values(*impl_, key);
  const Tensor& t = impl_->find(key);
  if (!(t.shape() == expected)) {
    throw WeightsError("parameter '" + std::string(key) + "' in " + impl_->path.string() +
                       " has shape " + t.shape().str() + " but the model expects " +
                       expected.str() + "; the file may be for a different model preset");
  }
  impl_->mark_used(key);
  return t;
}

Tensor WeightStore::get(std::string_view key) const {
  require_values(*impl_, key);
  const Tensor& t = impl_->find(key);
  impl_->mark_used(key);
  return t;
}

bool WeightStore::contains(std::string_view key) const {
  return impl_->tensors.find(key) != impl_->tensors.end();
}

const Shape& WeightStore::shape_of(std::string_view key) const {
  return impl_->find(key).shape();
}

DType WeightStore::dtype_of(std::string_view key) const {
  return impl_->find(key).dtype();
}

std::vector<std::string> WeightStore::keys() const {
  std::vector<std::string> out;
  out.reserve(impl_->tensors.size());
  for (const auto& entry : impl_->tensors) out.push_back(entry.first);
  return out;
}

std::vector<std::string> WeightStore::unused_keys() const {
  const std::lock_guard lock(impl_->used_mutex);
  std::vector<std::string> out;
  for (const auto& entry : impl_->tensors) {
    if (!impl_->used.contains(entry.first)) out.push_back(entry.first);
  }
  return out;
}

std::int64_t WeightStore::parameter_count() const {
  return impl_->parameter_count;
}
const fs::path& WeightStore::path() const {
  return impl_->path;
}
WeightStore::Format WeightStore::format() const {
  return impl_->format;
}

const std::map<std::string, std::string>& WeightStore::attributes() const {
  return impl_->attributes;
}

}  // namespace cpufold
