#!/usr/bin/env bash
# scripts/build.sh recovers by itself from a configure that failed (a CMakeCache.txt without a
# Makefile, as left when a package was missing) and from a cache made for another source tree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A failed configure: the cache exists, the Makefile does not.
build="$tmp/failed"
mkdir -p "$build"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\n' "$root" >"$build/CMakeCache.txt"
CPUFOLD_BUILD_DIR="$build" "$root/scripts/build.sh" --configure-only
[ -f "$build/Makefile" ] || { echo "FAIL: no Makefile after recovering a failed configure"; exit 1; }

# A cache from another checkout: CMake itself would refuse it.
build="$tmp/foreign"
mkdir -p "$build"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere/cpufold\nCMAKE_CACHEFILE_DIR:INTERNAL=%s\n' \
  "$build" >"$build/CMakeCache.txt"
CPUFOLD_BUILD_DIR="$build" "$root/scripts/build.sh" --configure-only 2>"$tmp/err"
grep -q "configured for another source tree" "$tmp/err" || { echo "FAIL: no notice"; exit 1; }
grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$root" "$build/CMakeCache.txt" ||
  { echo "FAIL: cache still points elsewhere"; exit 1; }

# A configure that fails leaves no cache behind, so the next run starts clean.
build="$tmp/broken"
if CPUFOLD_BUILD_DIR="$build" CPUFOLD_CMAKE_ARGS="-DCMAKE_CXX_COMPILER=/nonexistent/c++" \
  "$root/scripts/build.sh" --configure-only >/dev/null 2>&1; then
  echo "FAIL: a configure with a missing compiler succeeded"; exit 1
fi
[ ! -f "$build/CMakeCache.txt" ] || { echo "FAIL: failed configure left its cache"; exit 1; }
echo "build.sh recovery: ok"
