#include "io/feature_file.h"

namespace cpufold {

std::int64_t feature_iterations(const Hdf5TensorReader& file) {
  const Shape s = file.shape("inputs/aatype");
  if (s.rank() == 0) {
    throw InputError("inputs/aatype in " + file.path().string() +
                     " has no recycling dimension (expected [n_res, iterations])");
  }
  return s[s.rank() - 1];
}

Tensor read_feature(const Hdf5TensorReader& file, const std::string& name, std::int64_t iteration,
                    DType dtype, Arena& arena) {
  const std::string dataset = "inputs/" + name;
  const Shape full = file.shape(dataset);
  if (full.rank() == 0 || iteration < 0 || iteration >= full[full.rank() - 1]) {
    throw InputError(dataset + " in " + file.path().string() + " has shape " + full.str() +
                     ": no recycling iteration " + std::to_string(iteration) + " on its last axis");
  }
  Shape one;
  for (int a = 0; a + 1 < full.rank(); ++a) one.push_back(full[a]);
  Tensor out = arena.allocate(dtype, one);
  file.read_last_axis_index(dataset, iteration, out);
  return out;
}

}  // namespace cpufold
