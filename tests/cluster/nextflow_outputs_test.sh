#!/usr/bin/env bash
# The Nextflow process CPUFOLD_COLABFOLD (scripts/cluster/cpufold_colabfold.nf) emits the file
# patterns nf-core/proteinfold's COLABFOLD_BATCH does: its script (cpufold_colabfold.sh) runs
# in a task directory, and every non-optional `path(...)` pattern of the .nf output block must
# match a file there. Nextflow itself is not packaged in Debian and is not run.
# Usage: nextflow_outputs_test.sh CPUFOLD TEST_DATA_DIR REPO
set -euo pipefail
cpufold=$(realpath "$1")
data=$(realpath "$2")
repo=$(realpath "$3")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '>some header\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ\n' >"$dir/in.fasta"
cd "$dir"
CPUFOLD=$cpufold "$repo/scripts/cluster/cpufold_colabfold.sh" P1 "$dir/in.fasta" "$data" 0 1 2000 \
  --model-order 1,3 --num-models 2 --msa-mode single_sequence --amber --num-relax 1 >task.log 2>&1 || {
  cat task.log
  echo "FAIL: the process script failed"
  exit 1
}
shopt -s globstar nullglob
checked=0
while IFS= read -r line; do
  pattern=$(sed -E 's/.*path \("([^"]+)"\).*/\1/; s/.*path "([^"]+)".*/\1/' <<<"$line")
  pattern=${pattern//'${meta.id}'/P1}
  # shellcheck disable=SC2206 # the pattern is meant to glob
  matches=($pattern)
  if [ ${#matches[@]} -eq 0 ] && ! grep -q "optional: true" <<<"$line"; then
    ls -R
    echo "FAIL: no file matches $pattern"
    exit 1
  fi
  checked=$((checked + 1))
done < <(sed -n '/output:/,/script:/p' "$repo/scripts/cluster/cpufold_colabfold.nf" | grep 'path')
[ "$checked" -ge 8 ] || { echo "FAIL: only $checked output patterns found"; exit 1; }
head -1 P1_plddt_mqc.tsv | grep -q "^Positions	rank_0	rank_1$" || { echo "FAIL: plddt header"; exit 1; }
[ "$(wc -l <P1_plddt_mqc.tsv)" = 34 ] || { echo "FAIL: plddt rows"; exit 1; }
[ -f raw/P1.done.txt ] || { echo "FAIL: job not named P1"; exit 1; }
echo "PASS: $checked output patterns of CPUFOLD_COLABFOLD match"
