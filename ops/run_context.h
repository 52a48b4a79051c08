// What every module's forward() needs besides its inputs: scratch memory, the slice size for
// attention-like loops, and the optional trace hook.
#pragma once

#include <cstdint>
#include <string>

#include "memory/arena.h"
#include "memory/tensor.h"

namespace cpufold {

// Receives named intermediates (`<module>/call_<k>/<name>`, the reference's trace/ layout).
class Tracer {
 public:
  virtual ~Tracer() = default;
  virtual void record(const std::string& name, const Tensor& value) = 0;
};

struct RunContext {
  Arena* scratch = nullptr;  // transients; a module releases what it takes before returning
  std::int64_t chunk = 0;    // batch rows per attention / outer-product slice; <= 0: all rows
  Tracer* tracer = nullptr;  // null: tracing off
  int call = 0;              // recycling iteration, the k of call_k in trace names

  Arena& arena() const { return *scratch; }
  // Records `value` as `<module>/call_<call>/<name>` when tracing is on.
  void trace(const std::string& module, const std::string& name, const Tensor& value) const {
    if (tracer) tracer->record(module + "/call_" + std::to_string(call) + "/" + name, value);
  }
};

}  // namespace cpufold
