#!/usr/bin/env bash
# A mixed-length batch under a memory limit (../shared/tools/memlimit, as Slurm's --mem would
# set it), not a test: `predict --instances 2 --threads-per-instance 1` admits jobs by their
# planned peaks under the cgroup's limit, against the same jobs one after another with both
# cores (--instances 1 --threads-per-instance 2) under the same limit. Prints each run's wall
# time, memlimit's peak and OOM kills, done markers, and from batch.json the most the running
# jobs' plans held at once.
# Usage: tests/bench/admission_bench.sh CPUFOLD DATA_DIR MEMLIMIT LIMIT [LENGTHS...] [-- OUT]
set -euo pipefail
cpufold=$(realpath "$1")
data=$(realpath "$2")
memlimit=$(realpath "$3")
limit=$4
shift 4
lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(64 96 128 160 192 224)
out=$(mktemp -d)
export CPUFOLD_CACHE_DIR="$out/cache"
if [ -z "${CPUFOLD_TIME_MODEL:-}" ] && [ -f "${XDG_CACHE_HOME:-$HOME/.cache}/cpufold/time_model.json" ]; then
  export CPUFOLD_TIME_MODEL="${XDG_CACHE_HOME:-$HOME/.cache}/cpufold/time_model.json"
fi

python3 - "$out/in" "${lengths[@]}" <<'PY'
import os, random, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
letters = "ACDEFGHIKLMNPQRSTVWY"
for n in map(int, sys.argv[2:]):
    r = random.Random(n)
    query = "".join(r.choice(letters) for _ in range(n))
    rows = [query] + ["".join(c if r.random() < 0.6 else r.choice(letters) for c in query)
                      for _ in range(5700)]
    with open(f"{out}/len{n}.a3m", "w") as f:
        f.write("".join(f">s{i}\n{row}\n" for i, row in enumerate(rows)))
PY
common=(--data "$data" --model-order 1 --num-models 1 --num-recycle 0 --quiet)
"$cpufold" predict "$out/in/len${lengths[0]}.a3m" "$out/warm" "${common[@]}" --threads 2 >/dev/null
"$cpufold" plan "$out/in" "${common[@]}" --format json >"$out/plan.json"
python3 - "$out/plan.json" <<'PY'
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    print("  plan %s: peak %.0f MiB" % (j["name"], j["dram_peak_bytes"] / 2**20))
PY

run() {  # NAME ARGS...
  local name=$1
  shift
  local t0 t1 status=0
  t0=$(date +%s.%N)
  "$memlimit" "$limit" "$cpufold" predict "$out/in" "$out/$name" "${common[@]}" "$@" \
    2>"$out/$name.memlimit" || status=$?
  t1=$(date +%s.%N)
  printf "  %-8s %7.1f s, exit %d, %s done; %s\n" "$name" "$(echo "$t1 - $t0" | bc)" "$status" \
    "$(ls "$out/$name"/*.done.txt 2>/dev/null | wc -l)/${#lengths[@]}" \
    "$(grep -o 'memlimit:.*' "$out/$name.memlimit" | tail -1)"
}
echo "cpufold admission bench: lengths ${lengths[*]}, full MSA depth, 1 model, 1 iteration, limit $limit"
run serial --instances 1 --threads-per-instance 2
run packed --instances 2 --threads-per-instance 1
python3 - "$out/packed/batch.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
jobs = [j for j in b["jobs"] if "start_seconds" in j]
most = 0
for a in jobs:
    t = a["start_seconds"]
    running = [j for j in jobs if j["start_seconds"] <= t < j["start_seconds"] + j.get("seconds", 0)]
    most = max(most, sum(j["predicted_peak_mib"] for j in running))
print(f"  packed: budget {b['memory_budget_mib']:.0f} MiB ({b['memory_budget_source']}); "
      f"most planned at once {most:.0f} MiB (weights counted per job)")
for j in jobs:
    print(f"    {j['name']}: instance {j['instance']}, {j['start_seconds']:.0f}-"
          f"{j['start_seconds'] + j.get('seconds', 0):.0f} s, predicted {j['predicted_peak_mib']:.0f} MiB, "
          f"measured {j.get('measured_peak_mib', 0):.0f} MiB, {j['status']}")
PY
echo "  outputs in $out"
