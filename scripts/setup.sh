#!/usr/bin/env bash
# Installs cpufold's build and test dependencies from Debian packages (run as root).
# Idempotent and quiet: does nothing when everything is installed already.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format
  libdnnl-dev ocl-icd-opencl-dev libhdf5-dev libeigen3-dev libcli11-dev libgtest-dev
  libzip-dev libxxhash-dev zlib1g-dev libnuma-dev liburing-dev libhwloc-dev nlohmann-json3-dev gemmi-dev tao-pegtl-dev libcairo2-dev fonts-dejavu-core
  python3 python3-h5py python3-numpy python3-gemmi
  slurmctld slurmd slurm-client munge snakemake
  hmmer hhsuite mmseqs2 kalign
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
