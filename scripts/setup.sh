#!/usr/bin/env bash
# Installs every system package weft needs on a fresh Debian 12 machine. Idempotent: packages already
# present are skipped by apt, and apt is only touched when something is missing.
set -euo pipefail

packages=(
  # toolchain and build
  build-essential g++ cmake ninja-build pkg-config git python3 python3-venv
  clang-format clang-tidy valgrind
  # runtime dependencies
  libhwloc-dev hwloc
  # tests
  libgtest-dev libgmock-dev
  # fibers (suspendable tasks), linear algebra for the applications
  libboost-context-dev libopenblas-dev liblapacke-dev
  # peers compared by the benchmarks
  libomp-14-dev libtbb-dev libstarpu-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all system packages present"
fi
