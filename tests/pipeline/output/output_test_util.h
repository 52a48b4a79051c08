// Fake model outputs for the output-writer tests: a PredictionView backed by a small arena.
#pragma once

#include <cstdint>
#include <memory>

#include "memory/arena.h"
#include "memory/tier.h"
#include "pipeline/output/prediction_view.h"

namespace cpufold::testing {

// The view and the arena that holds its tensors.
struct FakePrediction {
  std::unique_ptr<Arena> arena;
  PredictionView view;
  operator const PredictionView&() const { return view; }
};

// pLDDT [n] and, with the PAE head, PAE [n, n] filled by `plddt(i)` and `pae(i, j)`.
template <typename PlddtFn, typename PaeFn>
FakePrediction fake_prediction(std::int64_t n, bool has_pae, PlddtFn plddt, PaeFn pae) {
  FakePrediction f;
  f.arena = std::make_unique<Arena>("test outputs", dram_tier(),
                                    static_cast<std::size_t>(4 * (n + n * n)) + 1024);
  PredictionView& p = f.view;
  p.plddt = f.arena->allocate(DType::f32, Shape{n});
  for (std::int64_t i = 0; i < n; ++i) p.plddt.data_as<float>()[i] = plddt(i);
  p.has_pae = has_pae;
  if (has_pae) {
    p.pae = f.arena->allocate(DType::f32, Shape{n, n});
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) p.pae.data_as<float>()[i * n + j] = pae(i, j);
    }
    p.max_pae = 31.75f;
    p.ptm = 0.8765f;
  }
  return f;
}

}  // namespace cpufold::testing
