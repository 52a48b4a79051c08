#include "tests/support/bf16_baseline.h"

#include <string>
#include <vector>

#include "io/hdf5_weights.h"
#include "io/weight_store.h"
#include "memory/tensor_copy.h"

namespace cpufold::testing {

void write_bf16_rounded_params(const std::filesystem::path& params,
                               const std::filesystem::path& out) {
  const WeightStore store = WeightStore::open(params);
  std::vector<std::vector<float>> values;
  std::vector<NamedTensor> arrays;
  const std::vector<std::string> keys = store.keys();
  values.reserve(keys.size());
  for (const std::string& key : keys) {
    const Tensor t = store.get(key);
    std::vector<float>& v = values.emplace_back(static_cast<std::size_t>(t.numel()));
    convert_tensor(t, Tensor(v.data(), DType::f32, t.shape()));
    for (float& x : v) x = static_cast<float>(bf16(x));
    arrays.push_back(
        {key, Tensor(v.empty() ? zero_element_data() : v.data(), DType::f32, t.shape())});
  }
  write_hdf5_weights(out, arrays,
                     {{"source_file", params.filename().string()}, {"rounded_to", "bf16"}});
}

}  // namespace cpufold::testing
