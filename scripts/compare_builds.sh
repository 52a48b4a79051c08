#!/usr/bin/env bash
# Are two cpufold binaries' outputs bit-identical? For refactors that must not change a number.
#   scripts/compare_builds.sh OLD_CPUFOLD NEW_CPUFOLD [WORK_DIR]
# Runs both on the same inputs: `evaluate` on the reference examples (tiny model_1 with
# templates and 3 recycles, tiny model_3, full-width model_1 in fp32, bf16 and chunk 8; the
# full-width and tiny files from CPUFOLD_REFERENCE_DIR, default ../shared/reference) and
# `predict` on the shipped examples with --save-recycles. HDF5 outputs are compared with
# h5diff (every dataset, bit for bit), structure and score files byte for byte (lines naming a
# date, time or version aside). Exit 0 when everything matches, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 2 ] || { sed -n 2,9p "$0" >&2; exit 2; }
old="$(realpath "$1")"
new="$(realpath "$2")"
work="${3:-$(mktemp -d)}"
ref="${CPUFOLD_REFERENCE_DIR:-$root/../shared/reference}"
command -v h5diff >/dev/null || { echo "compare_builds: needs h5diff (apt-get install hdf5-tools)" >&2; exit 2; }
[ -d "$ref/full_width" ] || { echo "compare_builds: no reference data in $ref (set CPUFOLD_REFERENCE_DIR)" >&2; exit 2; }
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

outputs() {  # BINARY DIR
  local bin="$1" out="$2" full="$ref/full_width"
  rm -rf "$out" && mkdir -p "$out"
  "$bin" evaluate --quiet --params "$ref/tiny/params/params_model_1_ptm.npz" \
    --features "$ref/tiny/model_1_ptm_r24_c8_e16_t2_rec3_s0.h5" --out "$out/tiny1.h5" >/dev/null
  "$bin" evaluate --quiet --params "$ref/tiny/params/params_model_3_ptm.npz" \
    --features "$ref/tiny/model_3_ptm_r24_c8_e16_t0_rec1_s0.h5" --out "$out/tiny3.h5" >/dev/null
  for run in "full1" "full1_bf16 --precision bf16" "full1_c8 --chunk-size 8"; do
    set -- $run
    "$bin" evaluate --quiet --params "$full/params/params_model_1_ptm.npz" \
      --features "$full/model_1_ptm_r24_c8_e16_t2_rec1_s0.h5" --out "$out/$1.h5" "${@:2}" >/dev/null
  done
  for input in proteins.fasta tautomerase.a3m; do
    "$bin" predict "$root/data/examples/$input" "$out/pred" --data "$root/tests/data" \
      --model-order 1,3 --num-models 2 --num-recycle 2 --save-recycles --quiet \
      --msa-mode single_sequence >/dev/null
  done
}

echo "compare_builds: running $old"
outputs "$old" "$work/old"
echo "compare_builds: running $new"
outputs "$new" "$work/new"
status=0
for f in "$work/old"/*.h5; do
  name="$(basename "$f")"
  if h5diff -q "$f" "$work/new/$name" >/dev/null 2>&1; then
    echo "same       $name"
  else
    echo "DIFFERENT  $name (see: h5diff $f $work/new/$name)"
    status=1
  fi
done
files=0
for f in "$work/old/pred"/*.pdb "$work/old/pred"/*.cif "$work/old/pred"/*scores*.json; do
  name="$(basename "$f")"
  files=$((files + 1))
  if ! diff -q <(grep -viE 'date|time|version' "$f") \
    <(grep -viE 'date|time|version' "$work/new/pred/$name" 2>/dev/null) >/dev/null; then
    echo "DIFFERENT  pred/$name"
    status=1
  fi
done
echo "compare_builds: $files structure and score files compared; outputs in $work"
[ "$status" -eq 0 ] && echo "compare_builds: identical" || echo "compare_builds: the outputs differ"
exit "$status"
