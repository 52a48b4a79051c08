#!/usr/bin/env bash
# cmake/check_includes.cmake accepts the source tree as it is and rejects a copy of it with one
# include that points back up the library order or across to a sibling (and with one that is
# allowed, accepts it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# CMake wraps its messages: the output is read as one line.
check() {
  local rc=0
  cmake -DROOT="$1" -P "$root/cmake/check_includes.cmake" >"$tmp/raw" 2>&1 || rc=$?
  tr -s "\n " "  " <"$tmp/raw" >"$tmp/out"
  return $rc
}

check "$root" || { cat "$tmp/out"; echo "FAIL: the source tree itself fails the check"; exit 1; }

copy="$tmp/tree"
mkdir -p "$copy"
cp -r "$root/memory" "$root/io" "$root/ops" "$root/evoformer" "$root/structure" "$root/pipeline" "$copy/"

# Allowed: the runner includes a feature header (features come before the runner).
echo '#include "pipeline/features/feature_source.h"' >>"$copy/pipeline/runner/evaluate.h"
check "$copy" || { cat "$tmp/out"; echo "FAIL: a downward include was rejected"; exit 1; }

# Forbidden: the data pipeline includes the model runner (the dependency issue 12 removed).
echo '#include "pipeline/runner/model_runner.h"' >>"$copy/pipeline/features/feature_pipeline.h"
if check "$copy"; then echo "FAIL: an upward include passed the check"; exit 1; fi
grep -q 'pipeline/features/feature_pipeline.h: includes "pipeline/runner/model_runner.h"' \
  "$tmp/out" || { cat "$tmp/out"; echo "FAIL: the message does not name the include"; exit 1; }

# Forbidden across top-level libraries too: memory/ including io/.
cp "$root/pipeline/features/feature_pipeline.h" "$copy/pipeline/features/feature_pipeline.h"
echo '#include "io/a3m.h"' >>"$copy/memory/error.h"
if check "$copy"; then echo "FAIL: memory/ including io/ passed the check"; exit 1; fi
grep -q 'memory/error.h: includes "io/a3m.h"' "$tmp/out" ||
  { cat "$tmp/out"; echo "FAIL: the message does not name the include"; exit 1; }

# Forbidden between siblings: structure/ including evoformer/ (both build on ops/ only).
cp "$root/memory/error.h" "$copy/memory/error.h"
echo '#include "evoformer/trunk.h"' >>"$copy/structure/rigid.h"
if check "$copy"; then echo "FAIL: structure/ including evoformer/ passed the check"; exit 1; fi
grep -q 'structure/rigid.h: includes "evoformer/trunk.h" of evoformer/, a sibling' "$tmp/out" ||
  { cat "$tmp/out"; echo "FAIL: the message does not name the sibling include"; exit 1; }
echo "ok"
