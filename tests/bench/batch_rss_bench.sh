#!/usr/bin/env bash
# RSS of one `cpufold predict` process over a batch of many tiny jobs (issue 33 #5): VmRSS and
# VmHWM sampled every 0.2 s against the jobs done so far. A flat line is the goal: nothing the
# batch keeps per job may grow with the number of jobs.
#   tests/bench/batch_rss_bench.sh [JOBS] [BUILD_DIR]      (default 10000 jobs, build/)
set -euo pipefail
jobs=${1:-10000}
build=${2:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$jobs" > "$work/q.fasta" <<'PY'
import random, sys
random.seed(1)
for i in range(int(sys.argv[1])):
    print(f">j{i}\n" + "".join(random.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(12)))
PY
"$root/$build/cpufold" predict "$work/q.fasta" "$work/out" --data "$root/tests/data" \
  --model-order 3 --num-models 1 --num-recycle 0 --instances 1 --threads 1 --quiet \
  --skip-output msa,plots,pae_json &
pid=$!
echo "jobs_done vmrss_kib vmhwm_kib"
while kill -0 "$pid" 2>/dev/null; do
  status=$(cat /proc/$pid/status 2>/dev/null) || break
  rss=$(awk '/^VmRSS:/ {print $2}' <<<"$status")
  hwm=$(awk '/^VmHWM:/ {print $2}' <<<"$status")
  done_jobs=$( (find "$work/out" -maxdepth 1 -name '*.done.txt' 2>/dev/null || true) | wc -l)
  [ -n "$rss" ] && echo "$done_jobs $rss $hwm"
  sleep 0.2
done | awk 'NR == 1 || $1 - last >= 500 {print; last = $1} {final = $0} END {print final}'
wait "$pid"
