// Plots a person can look at, as PNG bytes (drawn here, encoded with libpng).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "memory/tensor.h"

namespace cpufold {

struct PlddtCurve {
  std::string label;             // e.g. "rank_001 model_1 seed_000"
  std::span<const float> plddt;  // [n_res] 0-100
};

// {job}_plddt.png: pLDDT per residue (y 0-100, x residue 1..n), one coloured line per
// model with a legend, and AF2's confidence bands shaded.
std::string plddt_plot_png(const std::string& title, std::span<const PlddtCurve> curves);

// {job}_pae.png: one PAE heatmap per model side by side ([n,n] f32, 0..max_pae, the
// AlphaFold DB green-white colour scale) with axis ticks and a colour bar.
struct PaeMatrix {
  std::string label;
  Tensor pae;  // f32 [n_res, n_res]
  float max_pae = 31.75f;
};
std::string pae_plot_png(const std::string& title, std::span<const PaeMatrix> matrices);

}  // namespace cpufold
