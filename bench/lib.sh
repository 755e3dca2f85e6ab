# Usage: . bench/lib.sh   (sourced by the bench scripts; nothing to run on its own)
#
# Shared by the bench scripts (sourced, not run): configure and build targets, find the peer
# runtimes, describe the machine. The caller sets BUILD_DIR and defines nothing else first.

# Run rather than sourced: print the above (-h, --help) or refuse, and do nothing else.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  case ${1:-} in
    -h | --help) awk '!/^#/ { exit } 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lib.sh: sourced by the bench scripts, not run (try --help)" >&2; exit 2 ;;
  esac
fi

die() { echo "$(basename "$0"): $*" >&2; exit 2; }
has_word() { [[ " $1 " == *" $2 "* ]]; }
log() { echo "$*" >&2; }
csv_field() { local s=${1//\"/\"\"}; printf '"%s"' "$s"; }

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Configures BUILD_DIR (Release and Ninja when new) and builds each named target; binary[target] is its path,
# unset when it could not be built (a note says so, the caller skips its rows).
declare -A binary
notes=()
bench_build() {
  command -v cmake >/dev/null || die "cmake not found"
  local build_log new_tree=()
  build_log=$(mktemp)
  # A new tree is configured Release, as the results are measured (Ninja when there is one);
  # an existing one keeps its build type.
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    new_tree=(-DCMAKE_BUILD_TYPE=Release)
    if command -v ninja >/dev/null; then new_tree+=(-G Ninja); fi
  fi
  log "configuring $BUILD_DIR"
  if ! cmake -S "$bench_root" -B "$BUILD_DIR" "${new_tree[@]}" -DWEFT_BUILD_BENCH=ON >"$build_log" 2>&1; then
    cat "$build_log" >&2
    rm -f "$build_log"
    die "cmake configure failed"
  fi
  local target
  for target in "$@"; do
    if cmake --build "$BUILD_DIR" --target "$target" >"$build_log" 2>&1; then
      binary[$target]=$(find "$BUILD_DIR" -name "$target" -type f -perm -u+x -print -quit)
    else
      grep -q "unknown target\|No rule to make target" "$build_log" || tail -n 20 "$build_log" >&2
      notes+=("$target could not be built here: its rows are missing")
      log "$target not built; its rows are skipped"
    fi
  done
  rm -f "$build_log"
}

# LLVM libomp (preloaded under gcc-built binaries): LIBOMP, else the Debian package's, else ldconfig's;
# empty when there is none (the caller notes which of its rows are missing).
bench_find_libomp() {
  libomp=${LIBOMP:-}
  if [ -z "$libomp" ]; then
    local candidate
    for candidate in $(dpkg -L libomp5-14 2>/dev/null | grep 'libomp\.so\.5$') \
                     $(ldconfig -p 2>/dev/null | awk '/libomp\.so\.5 /{print $NF}') /usr/lib/llvm-*/lib/libomp.so.5; do
      if [ -f "$candidate" ]; then libomp=$candidate; break; fi
    done
  fi
  return 0
}

# libweft.so of BUILD_DIR; weft_door=1 when it carries the GOMP ABI (preloadable under OpenMP binaries).
bench_find_libweft() {
  libweft=$(find "$BUILD_DIR" -name 'libweft.so' \( -type f -o -type l \) -print -quit 2>/dev/null)
  weft_door=0
  if [ -n "$libweft" ] && nm -D --defined-only "$libweft" 2>/dev/null | grep ' GOMP_task' >/dev/null; then
    weft_door=1
  else
    notes+=("${libweft:-libweft.so} does not export the GOMP ABI: no weft rows for OpenMP binaries")
  fi
}

# The lines every report starts with.
bench_meta() {
  echo "date: $(date -Iseconds)"
  echo "machine: $(uname -srm), $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) cores, $(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
  echo "compiler: $(gcc --version 2>/dev/null | head -n 1)"
  bench_line_trip
  echo "weft: $(git -C "$bench_root" rev-parse --short HEAD 2>/dev/null || echo 'no commit')$(git -C "$bench_root" diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)')"
}

# The host's cache-line round trip between two cores now (bench/micro/line_trip.c), when built: a
# VM's phases move every 2-thread figure with it, so a report says which phase it saw, at its start
# and (scripts call this again) at its end.
bench_line_trip() {
  local tool
  tool=$(find "${BUILD_DIR:-$bench_root/build-rel}" -name line_trip -type f -perm -u+x -print -quit 2>/dev/null)
  [ -n "$tool" ] && echo "core-to-core: $("$tool" | sed 's/line_trip_ns=//') ns per line round trip"
  return 0
}

# A Python with matplotlib when there is one (the setup's .venv sees the system's), else python3.
bench_python() {
  if [ -x "$bench_root/.venv/bin/python" ]; then echo "$bench_root/.venv/bin/python"
  elif [ -x /usr/bin/python3 ]; then echo /usr/bin/python3
  else echo python3; fi
}
