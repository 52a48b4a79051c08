#!/usr/bin/env bash
# Builds and runs the deterministic input fuzzer (tests/fuzz): ITERATIONS mutated inputs fed
# in-process to the FASTA, A3M, Stockholm and CSV/TSV parsers and job discovery, then E2E
# (default 100) mutated files run through `cpufold predict` on the tiny test weights.
#   scripts/fuzz.sh [ITERATIONS (default 100000)] [SEED (default 1)]
# The same ITERATIONS and SEED give the same inputs. Exit 0: no finding; 1: findings, with
# reproducers in build/fuzz-out (replay one with
# `build/tests/cpufold_fuzz --replay FILE`). Takes about a minute on one core.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CPUFOLD_BUILD_DIR:-$root/build}"
iterations="${1:-100000}"
seed="${2:-1}"
# Only the fuzzer and the binary it runs, once the tree is configured.
if [ -f "$build/Makefile" ]; then
  cmake --build "$build" -j "$(nproc)" --target cpufold_fuzz >/dev/null
else
  "$root/scripts/build.sh" >/dev/null
fi
out="$build/fuzz-out"
rm -rf "$out"
OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" exec "$build/tests/cpufold_fuzz" \
  --iterations "$iterations" --seed "$seed" --e2e "${CPUFOLD_FUZZ_E2E:-100}" --out "$out" \
  --cpufold "$build/cpufold" --data "$root/tests/data" \
  "$root/data/examples" "$root/tests/fuzz/corpus"
