#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the shipped examples:
# `cpufold predict` folds data/examples/proteins.fasta (single-sequence mode) and
# data/examples/tautomerase.a3m (with its MSA), then the whole model is checked against the
# independent AlphaFold2 implementation's outputs on a 24-residue reference example.
# The weights are the small random test weights in tests/data/params (real AF2 format,
# reduced width and depth; NOT a trained model): the structures they produce are meaningless.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cpufold="${CPUFOLD_BUILD_DIR:-$root/build}/cpufold"
out="${CPUFOLD_DEMO_OUT:-/tmp/cpufold-demo}"
mkdir -p "$out"
models=(--data "$root/tests/data" --model-order 1,3 --num-models 2)
single=(--msa-mode single_sequence)  # no MSA for proteins.fasta: the query alone, asked for

echo "== NOTE: random test weights (tests/data/params): the predicted structures are meaningless."
echo "   For real predictions put AlphaFold2's params_model_N_ptm.npz in DIR/params/ and pass --data DIR."
echo
echo "== cpufold predict: 4 proteins, single-sequence mode -> $out/predictions"
"$cpufold" predict "$root/data/examples/proteins.fasta" "$out/predictions" "${models[@]}" "${single[@]}"
echo
echo "== cpufold predict: a 59-residue protein with its MSA (A3M) -> $out/predictions"
"$cpufold" predict "$root/data/examples/tautomerase.a3m" "$out/predictions" "${models[@]}"
echo
echo "== outputs"
ls "$out/predictions"

params="$root/tests/data/params/params_model_1_ptm.npz"
features="$root/tests/data/reference/model_1_ptm_r24_c8_e16_t2_rec3_s0.h5"
echo
echo "== cpufold evaluate: the whole model, 3 recycles, on the reference example's features"
"$cpufold" evaluate --params "$params" --features "$features" --out "$out/outputs.h5"
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  echo
  echo "== compared with the independent AlphaFold2 implementation's outputs (tests/data/reference)"
  "$root/scripts/compare_outputs.py" "$out/outputs.h5" "$features"
fi
