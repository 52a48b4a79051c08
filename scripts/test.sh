#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test with ctest.
# Full-width parity tests read CPUFOLD_REFERENCE_DIR (see README); without it they skip.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${CPUFOLD_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
