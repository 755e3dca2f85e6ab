#!/usr/bin/env bash
# Usage: scripts/setup.sh [-h | --help]
#
# Installs every system package weft needs on a fresh Debian 12 machine. Idempotent: packages already
# present are skipped by apt, and apt is only touched when something is missing. Then installs
# tools/weft-trace into .venv at the repository root.
set -euo pipefail

case ${1:-} in
  "") ;;
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

packages=(
  # toolchain and build
  build-essential g++ cmake ninja-build pkg-config git python3 python3-venv
  clang-format clang-tidy valgrind
  # bench/fork_join.sh --proxy: system calls, page faults and context switches per task (perf stat)
  linux-perf
  # tests (gfortran: the Fortran OpenMP programs of tests/omp)
  libgtest-dev libgmock-dev gfortran
  # fibers (suspendable tasks), linear algebra for the applications
  libboost-context-dev libopenblas-dev liblapacke-dev
  # peers compared by the benchmarks
  libomp-14-dev libtbb-dev libstarpu-dev
  # task-aware MPI (libweft-mpi, tests/mpi, the distributed applications) and its reference,
  # ScaLAPACK's pdpotrf
  openmpi-bin libopenmpi-dev libscalapack-openmpi-dev
  # tools/weft-trace: PNG Gantt charts, and its editable install into .venv (setuptools builds it,
  # wheel makes the editable wheel, pip installs it; all offline from these packages)
  python3-matplotlib python3-setuptools python3-wheel python3-pip
  # hardware counters in traces (WEFT_TRACE_COUNTERS): PAPI, loaded by weft at run time when asked
  libpapi7.0
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

# The trace analysis tool (tools/weft-trace) in .venv at the repository root. The environment sees
# the system's packages (matplotlib, setuptools), so nothing is downloaded: --no-index keeps pip
# offline. Skipped when .venv already runs this checkout's weft_trace.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
if ! [ -x "$venv/bin/weft-trace" ] ||
   ! "$venv/bin/python" -c 'import sys, weft_trace; sys.exit(not weft_trace.__file__.startswith(sys.argv[1]))' \
     "$repo/tools/weft-trace/" 2>/dev/null; then
  echo "setup: installing tools/weft-trace into .venv"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --no-index --no-deps --no-build-isolation \
    -e "$repo/tools/weft-trace"
fi
