// Reads a TrunkInputs for one recycling iteration from a processed-feature HDF5 file in the
// reference's layout (group inputs/, recycling dimension last).
#pragma once

#include "evoformer/trunk_inputs.h"
#include "io/hdf5_tensor_file.h"
#include "memory/arena.h"

namespace cpufold {

// Template features are read only when `templates` is set (and the file has them: a file
// without templates gives empty template tensors). Throws InputError naming the file and
// dataset for anything missing or inconsistent.
TrunkInputs read_trunk_inputs(const Hdf5TensorReader& file, std::int64_t iteration, bool templates,
                              Arena& arena);

// Bytes read_trunk_inputs takes from the arena (only the iteration asked for is read).
std::size_t trunk_inputs_bytes(const Hdf5TensorReader& file, bool templates);

}  // namespace cpufold
