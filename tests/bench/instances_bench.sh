#!/usr/bin/env bash
# Throughput of `cpufold predict` with several instances, all measured in one run (not a test):
#   1x1   --instances 1 --threads-per-instance 1
#   1x2   --instances 1 --threads-per-instance 2
#   2x1   --instances 2 --threads-per-instance 1
#   pinned  two hand-pinned processes (taskset), each folding half the batch on 1 thread
#   auto  --instances auto
# Each folds the same JOBS proteins of N_RES residues with a deep synthetic MSA (512 cluster
# rows and 5,120 extra rows are filled), one model, one iteration. Prints wall seconds,
# proteins/hour and the ratios the throughput issue asks for, and the weights' PSS summed over
# the 2x1 workers while both run.
# Usage: tests/bench/instances_bench.sh CPUFOLD DATA_DIR [N_RES] [JOBS] [OUT]
#   DATA_DIR holds params/params_model_1_ptm.{h5,npz} (e.g. ../shared/tools/full-depth-params).
set -euo pipefail
cpufold=$(realpath "$1")
data=$(realpath "$2")
n_res=${3:-128}
jobs=${4:-4}
out=${5:-$(mktemp -d)}
mkdir -p "$out"
export CPUFOLD_CACHE_DIR="$out/cache"
# The weight cache goes to $out; the time model stays the one `bench calibrate` saved.
if [ -z "${CPUFOLD_TIME_MODEL:-}" ] && [ -f "${XDG_CACHE_HOME:-$HOME/.cache}/cpufold/time_model.json" ]; then
  export CPUFOLD_TIME_MODEL="${XDG_CACHE_HOME:-$HOME/.cache}/cpufold/time_model.json"
fi

python3 - "$out" "$n_res" "$jobs" <<'PY'
import random, sys, os
out, n, jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
letters = "ACDEFGHIKLMNPQRSTVWY"
os.makedirs(f"{out}/in_all", exist_ok=True)
os.makedirs(f"{out}/in_a", exist_ok=True)
os.makedirs(f"{out}/in_b", exist_ok=True)
for j in range(jobs):
    r = random.Random(j)
    query = "".join(r.choice(letters) for _ in range(n))
    rows = [query]
    for _ in range(5700):  # mutants of the query: distinct rows, 512 clusters + 5,120 extra
        rows.append("".join(c if r.random() < 0.6 else r.choice(letters) for c in query))
    text = "".join(f">s{i}\n{row}\n" for i, row in enumerate(rows))
    for d in ("in_all", "in_a" if j % 2 == 0 else "in_b"):
        with open(f"{out}/{d}/p{j}.a3m", "w") as f:
            f.write(text)
PY

common=(--data "$data" --model-order 1 --num-models 1 --num-recycle 0 --quiet)
# The weight cache is built once, outside the timings.
"$cpufold" predict "$out/in_a/p0.a3m" "$out/warm" "${common[@]}" --threads 2 >/dev/null

run() {  # NAME ARGS...: wall seconds of one predict into $out/NAME
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$cpufold" predict "$out/in_all" "$out/$name" "${common[@]}" "$@"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}

pss_of_weights() {  # sums the PSS of the weight cache's mappings over the running workers
  local total=0
  for pid in $(pgrep -f -- "--worker-job" || true); do
    local kb
    kb=$(awk -v dir="$CPUFOLD_CACHE_DIR" '
      /^[0-9a-f]+-[0-9a-f]+ / { inside = index($0, dir) > 0 }
      inside && /^Pss:/ { sum += $2 } END { print sum + 0 }' "/proc/$pid/smaps" 2>/dev/null || echo 0)
    total=$((total + kb))
  done
  echo "$total"
}

declare -A wall
wall[1x1]=$(run 1x1 --instances 1 --threads-per-instance 1)
wall[1x2]=$(run 1x2 --instances 1 --threads-per-instance 2)
(
  sleep 60
  echo "weights PSS summed over the 2x1 workers: $(pss_of_weights) KiB; cache files: $(du -sk "$CPUFOLD_CACHE_DIR" | cut -f1) KiB" >"$out/pss.txt"
) &
wall[2x1]=$(run 2x1 --instances 2 --threads-per-instance 1)
wait
t0=$(date +%s.%N)
taskset -c 0 "$cpufold" predict "$out/in_a" "$out/pinned" "${common[@]}" --threads 1 &
a=$!
taskset -c 1 "$cpufold" predict "$out/in_b" "$out/pinned" "${common[@]}" --threads 1 &
b=$!
wait $a $b
t1=$(date +%s.%N)
wall[pinned]=$(echo "$t1 - $t0" | bc)
wall[auto]=$(run auto --instances auto)
auto_layout=$(grep -o "instances: [^;]*" "$out/auto/log.txt" 2>/dev/null | head -1 || true)
time_model=$(grep -o "time model: .*" "$out/2x1/log.txt" | head -1)
[ -n "$auto_layout" ] || auto_layout="1 instance (ran in-process)"

echo "cpufold instances bench: N_res $n_res, $jobs jobs, full MSA depth, 1 model, 1 iteration"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
for k in 1x1 1x2 2x1 pinned auto; do
  printf "  %-7s %8.1f s  %6.2f proteins/h\n" "$k" "${wall[$k]}" "$(echo "$jobs * 3600 / ${wall[$k]}" | bc -l)"
done
ratio() { echo "${wall[$1]} / ${wall[$2]}" | bc -l; }
printf "  2x1 over 1x1 (proteins/h): %.3f (issue: >= 1.5)\n" "$(ratio 1x1 2x1)"
printf "  2x1 over hand-pinned:      %.3f (issue: within 5%%)\n" "$(ratio pinned 2x1)"
best=1x2
[ "$(echo "${wall[2x1]} < ${wall[1x2]}" | bc)" = 1 ] && best=2x1
printf "  auto over the better of 1x2 and 2x1 (%s): %.3f (issue: within 5%%); auto chose: %s\n" \
  "$best" "$(ratio $best auto)" "$auto_layout"
cat "$out/pss.txt"
echo "$time_model"
