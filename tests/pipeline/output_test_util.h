// Fake model outputs for the output-writer tests: a Prediction backed by a small arena.
#pragma once

#include <cstdint>
#include <memory>

#include "memory/arena.h"
#include "memory/tier.h"
#include "pipeline/model_runner.h"

namespace cpufold::testing {

// pLDDT [n] and, with the PAE head, PAE [n, n] filled by `plddt(i)` and `pae(i, j)`.
template <typename PlddtFn, typename PaeFn>
Prediction fake_prediction(std::int64_t n, bool has_pae, PlddtFn plddt, PaeFn pae) {
  Prediction p;
  p.arena = std::make_unique<Arena>("test outputs", dram_tier(),
                                    static_cast<std::size_t>(4 * (n + n * n)) + 1024);
  p.plddt = p.arena->allocate(DType::f32, Shape{n});
  for (std::int64_t i = 0; i < n; ++i) p.plddt.data_as<float>()[i] = plddt(i);
  p.has_pae = has_pae;
  if (has_pae) {
    p.predicted_aligned_error = p.arena->allocate(DType::f32, Shape{n, n});
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        p.predicted_aligned_error.data_as<float>()[i * n + j] = pae(i, j);
      }
    }
    p.max_predicted_aligned_error = 31.75f;
    p.ptm_score = 0.8765f;
  }
  return p;
}

}  // namespace cpufold::testing
