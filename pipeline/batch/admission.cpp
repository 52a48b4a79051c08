#include "pipeline/batch/admission.h"

namespace cpufold {

std::optional<Admission> next_admission(std::span<const JobDemand> waiting, const NodeState& node) {
  if (waiting.empty() || node.free_slots <= 0) return std::nullopt;
  if (waiting.front().alone) {
    if (node.running > 0) return std::nullopt;  // drain the node first
    return Admission{0, false};
  }
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if (!waiting[i].alone && waiting[i].peak_bytes <= node.free_bytes) return Admission{i, false};
  }
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    const JobDemand& j = waiting[i];
    if (j.alone || j.lean_peak_bytes > node.free_bytes) continue;
    // On an idle node nothing will free memory: the lean plan is the only way to run it.
    if (node.running == 0 || j.lean_seconds < node.next_end_seconds + j.seconds)
      return Admission{i, true};
  }
  return std::nullopt;
}

}  // namespace cpufold
