#!/usr/bin/env bash
# Runs the test suite (ctest in build/) once per instruction-set setting this CPU can stand in
# for: oneDNN capped at AVX2 with the generic row kernels, oneDNN capped at AVX-512 (no
# BF16/VNNI extensions) with the AVX2 row kernels, and the CPU's default. A production path must not depend on which
# kernels an ISA happens to have. Not part of the default test run (it triples its time).
# Extra arguments go to ctest (e.g. -R Linear, -L unit). Prints a pass count per setting.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CPUFOLD_BUILD_DIR:-$root/build}"
cd "$build" || { echo "test_isas: no build directory $build; run scripts/build.sh" >&2; exit 1; }

settings=(
  "ONEDNN_MAX_CPU_ISA=AVX2 CPUFOLD_ROW_KERNELS=generic"
  "ONEDNN_MAX_CPU_ISA=AVX512_CORE CPUFOLD_ROW_KERNELS=avx2"
  "CPUFOLD_ROW_KERNELS=auto"
)
status=0
summary=""
for setting in "${settings[@]}"; do
  echo "=== $setting"
  log="$(mktemp)"
  env $setting OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" \
    ctest -j "${CTEST_JOBS:-$(nproc)}" --output-on-failure "$@" 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  summary+="$setting: $(grep -E 'tests passed' "$log" | tail -1)"$'\n'
  rm -f "$log"
done
echo "=== summary"
printf '%s' "$summary"
exit $status
