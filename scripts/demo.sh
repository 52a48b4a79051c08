#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the shipped example.
# Until the model runs end to end, the main job is `cpufold info` on the shipped test weights
# (small random weights in the real AlphaFold2 .npz format; not a trained model).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cpufold="${CPUFOLD_BUILD_DIR:-$root/build}/cpufold"
params="$root/tests/data/params/params_model_1_ptm.npz"
echo "== cpufold info $params (random test weights in AF2 format, reduced depth and width)"
"$cpufold" info "$params"
