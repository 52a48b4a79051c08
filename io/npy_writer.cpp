#include "io/npy_writer.h"

#include <cstring>
#include <vector>

#include "memory/tensor_copy.h"

namespace cpufold {

std::string npy_f32_bytes(const Tensor& t) {
  // Python's tuple syntax: (), (n,), (a, b, c).
  std::string shape = "(";
  for (std::int64_t d = 0; d < t.rank(); ++d) {
    shape += (d > 0 ? ", " : "") + std::to_string(t.dim(d));
  }
  shape += t.rank() == 1 ? ",)" : ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64
  // and ended by '\n'.
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';

  std::vector<float> values(static_cast<std::size_t>(t.numel()));
  if (!values.empty()) convert_tensor(t, Tensor(values.data(), DType::f32, t.shape()));
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const std::size_t at = out.size();
  out.resize(at + values.size() * sizeof(float));
  std::memcpy(out.data() + at, values.data(), values.size() * sizeof(float));
  return out;
}

}  // namespace cpufold
