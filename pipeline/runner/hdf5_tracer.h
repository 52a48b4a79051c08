// The `--trace FILE.h5` hook: named intermediates written under `trace/`, with the names the
// reference file uses, so a mismatch is located in one run.
#pragma once

#include <filesystem>

#include "io/hdf5_tensor_file.h"
#include "ops/run_context.h"

namespace cpufold {

class Hdf5Tracer final : public Tracer {
 public:
  explicit Hdf5Tracer(const std::filesystem::path& path) : writer_(path) {}
  void record(const std::string& name, const Tensor& value) override {
    writer_.write("trace/" + name, value);
  }
  // Renames the finished file into place.
  void commit() { writer_.commit(); }

 private:
  Hdf5TensorWriter writer_;
};

}  // namespace cpufold
