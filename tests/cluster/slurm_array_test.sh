#!/usr/bin/env bash
# A 4-task Slurm job array (scripts/cluster/submit_slurm.sh on a throwaway single-node Slurm)
# folds one FASTA of 6 jobs: every job is folded by exactly one task, every done marker exists,
# timings.json holds all 6 records although 4 tasks wrote it.
# Usage: slurm_array_test.sh CPUFOLD TEST_DATA_DIR REPO   (exit 77: skipped)
set -euo pipefail
cpufold=$(realpath "$1")
data=$(realpath "$2")
repo=$(realpath "$3")
if [ "$(id -u)" != 0 ]; then
  echo "skipped: slurmd needs root"
  exit 77
fi
for tool in slurmctld slurmd sbatch munged; do
  command -v "$tool" >/dev/null || {
    echo "skipped: $tool not installed (scripts/setup.sh installs it)"
    exit 77
  }
done
dir=$(mktemp -d)
trap '"$repo/tests/cluster/single_node_slurm.sh" stop "$dir/slurm"; rm -rf "$dir" || true' EXIT
SLURM_CONF=$("$repo/tests/cluster/single_node_slurm.sh" start "$dir/slurm")
export SLURM_CONF

python3 - "$dir/jobs.fasta" <<'PY'
import random, sys
r = random.Random(3)
with open(sys.argv[1], "w") as f:
    for j in range(6):
        f.write(f">job{j}\n" + "".join(r.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(20 + 15 * j)) + "\n")
PY

CPUFOLD=$cpufold CPUS_PER_TASK=1 SBATCH_OPTIONS="--wait" \
  "$repo/scripts/cluster/submit_slurm.sh" "$dir/jobs.fasta" "$dir/out" 4 \
  --data "$data" --model-order 3 --num-models 1 --num-recycle 0 --msa-mode single_sequence \
  >"$dir/jobid" 2>"$dir/plan"

fail() {
  echo "FAIL: $*"
  echo "--- plan"; cat "$dir/plan"
  for f in "$dir"/out/slurm-*.out; do echo "--- $f"; cat "$f"; done
  echo "--- log.txt"; cat "$dir/out/log.txt" 2>/dev/null || true
  exit 1
}
grep -q -- "--cpus-per-task=1" "$dir/plan" || fail "plan has no --cpus-per-task"
grep -q -- "--array=1-4" "$dir/plan" || fail "plan has no --array"
grep -q -- "--time=" "$dir/plan" || fail "plan has no --time"
[ "$(ls "$dir"/out/slurm-*.out | wc -l)" = 4 ] || fail "not 4 task outputs"
for t in 1 2 3 4; do
  grep -q "shard $t/4" "$dir/out/log.txt" || fail "task $t did not take shard $t/4"
done
for j in 0 1 2 3 4 5; do
  [ -f "$dir/out/job$j.done.txt" ] || fail "job$j has no done marker"
  n=$(grep -c "\] job$j: done in" "$dir/out/log.txt" || true)
  [ "$n" = 1 ] || fail "job$j folded $n times"
done
records=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["jobs"]))' \
  "$dir/out/timings.json")
[ "$records" = 6 ] || fail "timings.json holds $records records, not 6"
echo "PASS: 4 array tasks folded 6 jobs, each exactly once"
