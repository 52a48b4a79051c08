#!/usr/bin/env bash
# The work of the Nextflow process CPUFOLD_COLABFOLD (cpufold_colabfold.nf), in the task's
# directory: folds FASTA as job ID into raw/ and writes the metric files nf-core/proteinfold's
# COLABFOLD_BATCH emits (nfcore_metrics.py).
# Usage: cpufold_colabfold.sh ID FASTA DATA_DIR NUM_RECYCLE CPUS MEM_MB [predict options...]
# Environment: CPUFOLD (the binary, default cpufold).
set -euo pipefail
id=$1 fasta=$2 data=$3 recycles=$4 cpus=$5 mem_mb=$6
shift 6
cpufold=${CPUFOLD:-cpufold}
here=$(dirname "$(realpath "$0")")

# The prefix names the job ID_0 whatever its FASTA header says; the files are then renamed ID_*.
"$cpufold" predict "$fasta" raw/ --data "$data" --num-recycle "$recycles" --threads "$cpus" \
  --mem-budget "${mem_mb}M" --jobname-prefix "$id" "$@"
for f in raw/"${id}"_0[._]*; do
  mv "$f" "raw/${id}${f#raw/"${id}"_0}"
done
python3 "$here/nfcore_metrics.py" "$id" raw .
cp "raw/${id}_coverage.png" "${id}_seq_coverage.png" 2>/dev/null || true
printf '"CPUFOLD_COLABFOLD":\n    cpufold: %s\n' "$("$cpufold" --version | awk '{print $NF}')" \
  >versions.yml
