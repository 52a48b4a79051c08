#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the shipped example: the whole
# AlphaFold2 model (3 recycles) on processed features of a 24-residue example, with the
# small random test weights shipped in tests/data (real AF2 format, reduced width and depth;
# NOT a trained model: the structure it produces is meaningless).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cpufold="${CPUFOLD_BUILD_DIR:-$root/build}/cpufold"
params="$root/tests/data/params/params_model_1_ptm.npz"
features="$root/tests/data/reference/model_1_ptm_r24_c8_e16_t2_rec3_s0.h5"
out="${CPUFOLD_DEMO_OUT:-/tmp/cpufold-demo}"
mkdir -p "$out"
echo "== the model in $params (random test weights in AF2 format)"
"$cpufold" info "$params"
echo
echo "== cpufold evaluate: full model, 3 recycles -> $out/outputs.h5"
"$cpufold" evaluate --params "$params" --features "$features" --out "$out/outputs.h5" \
  --trace "$out/trace.h5"
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  echo
  echo "== compared with the independent AlphaFold2 implementation's outputs (tests/data/reference)"
  "$root/scripts/compare_outputs.py" "$out/outputs.h5" "$features"
fi
