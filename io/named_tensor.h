// A parameter array by its AF2 name, as the npz and HDF5 readers hand them to WeightStore.
#pragma once

#include <cstddef>
#include <string>

#include "memory/tensor.h"

namespace cpufold {

struct NamedTensor {
  std::string key;  // AF2 name, e.g. "alphafold/alphafold_iteration/evoformer/...//weights"
  Tensor tensor;    // contiguous view into storage the reader's owner keeps alive
};

// A non-null address for arrays with zero elements, so that a loaded zero-element array is
// never confused with a default (empty) Tensor. Never dereferenced.
inline void* zero_element_data() {
  alignas(64) static std::byte anchor[64];
  return anchor;
}

}  // namespace cpufold
