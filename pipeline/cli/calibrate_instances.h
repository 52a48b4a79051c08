// `cpufold bench calibrate`'s measure of instances side by side: one Evoformer block timed in
// child processes pinned to their cores — alone on 1 thread, alone on 2, and one per core at
// once — for the time model's InstanceScaling (what predict --instances auto and plan
// --node-cores use).
#pragma once

#include <cstdint>
#include <filesystem>

#include "pipeline/runner/time_model.h"

namespace cpufold {

struct InstanceCalibration {
  std::filesystem::path params;
  std::int64_t n_res = 0, msa_rows = 0, chunk = 0;
  int repeat = 1;
};

// Measures and sets model.instances (bf16_speedup too when the CPU computes bf16 natively);
// prints what it measured.
void measure_instance_scaling(const InstanceCalibration& c, TimeModel& model);

}  // namespace cpufold
