#include "io/feature_file.h"

#include "memory/tensor_copy.h"

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
  // Read all iterations (the file stores them interleaved), keep one, release the rest.
  Shape one;
  for (int a = 0; a + 1 < full.rank(); ++a) one.push_back(full[a]);
  Tensor out = arena.allocate(dtype, one);
  {
    ArenaScope scope(arena);
    const DType file_type = dtype == DType::f32 ? DType::f32 : DType::i64;
    Tensor all = arena.allocate(file_type, full);
    file.read(dataset, all);
    convert_tensor(all.select(full.rank() - 1, iteration), out);
  }
  return out;
}

}  // namespace cpufold
