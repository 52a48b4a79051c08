// Processed AF2 features in the reference's HDF5 layout: group `inputs/`, with the recycling
// dimension LAST (size = iterations; iteration k uses x[..., k]).
#pragma once

#include <cstdint>
#include <string>

#include "io/hdf5_tensor_file.h"
#include "memory/arena.h"

namespace cpufold {

// Number of recycling iterations the feature file holds (last axis of inputs/aatype).
std::int64_t feature_iterations(const Hdf5TensorReader& file);

// `inputs/<name>` at recycling iteration `iteration`, as a contiguous `dtype` tensor allocated
// from `arena` (shape: the dataset's shape without its last axis). Throws InputError naming
// the file and dataset when it is missing or the iteration is out of range.
Tensor read_feature(const Hdf5TensorReader& file, const std::string& name, std::int64_t iteration,
                    DType dtype, Arena& arena);

}  // namespace cpufold
