#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test with ctest.
# Full-width parity tests read CPUFOLD_REFERENCE_DIR (see README); without it they skip.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${CPUFOLD_BUILD_DIR:-$root/build}"
# ctest runs one test per core; OpenMP teams inside each would oversubscribe the cores and
# spin against each other, so tests run single-threaded unless the caller says otherwise
# (tests that check thread-count independence set their own counts).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# The fuzz label (scripts/fuzz.sh, `ctest -L fuzz`) is not part of the default run.
ctest --output-on-failure -j "$(nproc)" -LE fuzz "$@"
