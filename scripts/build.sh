#!/usr/bin/env bash
# Configures and builds cpufold in build/ (Release unless CPUFOLD_BUILD_TYPE says otherwise;
# extra CMake arguments in CPUFOLD_CMAKE_ARGS). A second run reuses the build.
#   scripts/build.sh [--configure-only]
set -euo pipefail
configure_only=0
[ "${1:-}" = "--configure-only" ] && configure_only=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CPUFOLD_BUILD_DIR:-$root/build}"
cache="$build/CMakeCache.txt"

# A cache from another source tree (a moved or copied checkout) cannot be reused: CMake
# refuses it. Start that build directory over.
if [ -f "$cache" ] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$root" "$cache"; then
  echo "build: $build was configured for another source tree; configuring afresh" >&2
  rm -rf "$cache" "$build/CMakeFiles"
fi

mkdir -p "$build"
# Configure every time: on a configured tree it is a quick no-op, and it finishes a configure
# that failed before (a cache without a Makefile) once the missing package is installed.
# A configure that fails again drops its cache so that no half-written state is kept.
# shellcheck disable=SC2086
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CPUFOLD_BUILD_TYPE:-Release}" \
  ${CPUFOLD_CMAKE_ARGS:-} >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  rm -f "$cache"
  echo "build: CMake configure failed (log above); run scripts/setup.sh as root to install the dependencies" >&2
  exit 1
fi
[ "$configure_only" -eq 1 ] && exit 0
# Hide progress lines; pipefail keeps the build's own exit status.
cmake --build "$build" -j "$(nproc)" 2>&1 | { grep -vE '^\[ *[0-9]+%\]|^-- ' || true; }
