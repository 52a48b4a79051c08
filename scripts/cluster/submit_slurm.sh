#!/usr/bin/env bash
# Submits a cpufold job array of TASKS tasks that folds INPUT into OUTPUT_DIR, with each task's
# memory, cores and time limit from `cpufold plan --format slurm` (the largest job's planned peak
# plus 15%, the cores per task, the longest share's predicted time x1.5 + 5 min). Prints the job
# id. Extra sbatch options (partition, account, --wait) go in SBATCH_OPTIONS.
# Usage: submit_slurm.sh INPUT OUTPUT_DIR TASKS [predict options: --data DIR --msa-dir DIR ...]
# Environment: CPUFOLD (the binary, default cpufold), CPUS_PER_TASK (default: this machine's
# cores), SBATCH_OPTIONS.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
input=$1
out=$2
tasks=$3
shift 3
cpufold=${CPUFOLD:-cpufold}
here=$(dirname "$(realpath "$0")")

plan=$("$cpufold" plan "$input" --format slurm --shards "$tasks" \
  --node-cores "${CPUS_PER_TASK:-$(nproc)}" --quiet "$@")
echo "$plan" >&2
sbatch_args=()
while IFS= read -r line; do
  case $line in "#SBATCH "*) sbatch_args+=("${line#\#SBATCH }") ;; esac
done <<<"$plan"

mkdir -p "$out"
# shellcheck disable=SC2086 # SBATCH_OPTIONS is a list of options
exec sbatch --parsable "${sbatch_args[@]}" ${SBATCH_OPTIONS:-} --job-name=cpufold \
  --output="$out/slurm-%A_%a.out" "$here/cpufold_array.sbatch" "$(realpath "$input")" \
  "$(realpath "$out")" "$@"
