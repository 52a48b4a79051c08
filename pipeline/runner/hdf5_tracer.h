// The `--trace FILE.h5` hook: named intermediates written under `trace/`, with the names the
// reference file uses, so a mismatch is located in one run.
#pragma once

#include <filesystem>

#include <vector>

#include "io/hdf5_tensor_file.h"
#include "memory/tensor_copy.h"
#include "ops/bf16_rows.h"
#include "ops/run_context.h"

namespace cpufold {

class Hdf5Tracer final : public Tracer {
 public:
  explicit Hdf5Tracer(const std::filesystem::path& path) : writer_(path) {}
  // A bf16 representation (a bf16 trunk's extra MSA) is written widened to f32, like the
  // reference's.
  void record(const std::string& name, const Tensor& value) override {
    if (value.dtype() != DType::bf16) {
      writer_.write("trace/" + name, value);
      return;
    }
    std::vector<bf16> packed(static_cast<std::size_t>(value.numel()));
    copy_tensor(value, Tensor(packed.data(), DType::bf16, value.shape()));
    std::vector<float> wide(packed.size());
    detail::bf16_to_f32(packed.data(), wide.data(), value.numel());
    writer_.write("trace/" + name, Tensor(wide.data(), DType::f32, value.shape()));
  }
  // Renames the finished file into place.
  void commit() { writer_.commit(); }

 private:
  Hdf5TensorWriter writer_;
};

}  // namespace cpufold
