#!/usr/bin/env bash
# scripts/cluster/Snakefile folds a directory of 3 FASTA files with per-job memory from the plan;
# a second run finds nothing to do.
# Usage: snakemake_test.sh CPUFOLD TEST_DATA_DIR REPO   (exit 77: skipped)
set -euo pipefail
cpufold=$(realpath "$1")
data=$(realpath "$2")
repo=$(realpath "$3")
command -v snakemake >/dev/null || {
  echo "skipped: snakemake not installed (scripts/setup.sh installs it)"
  exit 77
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/fastas"
printf '>a\nMKTAYIAKQRQISFVKSHFSRQ\n' >"$dir/fastas/alpha.fasta"
printf '>b\nGSHMSLFDFFKNKGSAATATDRLKLIIS\n' >"$dir/fastas/beta.fa"
printf '>c\nNLYIQWLKDGGPSSGRPPPS\n' >"$dir/fastas/gamma.fasta"

run() {
  snakemake -s "$repo/scripts/cluster/Snakefile" --cores 2 --resources mem_mb=8000 \
    --directory "$dir" --config input="$dir/fastas" out="$dir/results" data="$data" \
    cpufold="$cpufold" extra="--model-order 3 --num-models 1 --num-recycle 0 --msa-mode single_sequence" "$@"
}
run >"$dir/first.log" 2>&1 || {
  cat "$dir/first.log"
  echo "FAIL: snakemake failed"
  exit 1
}
for name in alpha beta gamma; do
  grep -q "done.txt" "$dir/results/$name/folded.txt" || {
    cat "$dir/first.log"
    echo "FAIL: $name not folded"
    exit 1
  }
done
grep -q "mem_mb=" "$dir/first.log" || {
  cat "$dir/first.log"
  echo "FAIL: no job asked for planned memory"
  exit 1
}
run >"$dir/second.log" 2>&1
grep -q "Nothing to be done" "$dir/second.log" || {
  cat "$dir/second.log"
  echo "FAIL: the second run did work again"
  exit 1
}
echo "PASS: 3 FASTA files folded with planned memory; rerun had nothing to do"
