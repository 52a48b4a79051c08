// Plots a person can look at, as PNG bytes (drawn and encoded with cairo, see plot_canvas.h).
#pragma once

#include <cstdint>
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
// model with a legend, and AF2's confidence bands shaded. Rank 1 (the first curve) is drawn
// on top; a value that is not finite leaves a gap, counted in the legend.
std::string plddt_plot_png(const std::string& title, std::span<const PlddtCurve> curves);

// {job}_pae.png: one PAE heatmap per model side by side ([n,n] f32, 0..max_pae, the
// AlphaFold DB green-white colour scale) with axis ticks and a colour bar. Non-finite errors
// are grey, off the scale, with a "not finite" key under the bar.
struct PaeMatrix {
  std::string label;
  Tensor pae;  // f32 [n_res, n_res]
  float max_pae = 31.75f;
};
std::string pae_plot_png(const std::string& title, std::span<const PaeMatrix> matrices);

// {job}_coverage.png as ColabFold draws it (plot_msa_v2, monomer): one line per MSA row, its
// aligned (non-gap) positions coloured by the row's identity to the query (matches over all
// n_res positions; matplotlib's rainbow_r, red 0 to violet 1, gaps white), rows sorted by
// identity with the most similar on top, and the coverage (non-gap rows per position) as a
// black curve. `msa` holds [n_rows * n_res] HHblits ids (21 = gap), the query first.
std::string coverage_plot_png(const std::string& title, std::span<const std::int32_t> msa,
                              std::int64_t n_rows, std::int64_t n_res);

}  // namespace cpufold
