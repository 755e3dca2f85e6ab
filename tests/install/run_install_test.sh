#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and checks what a user of the install gets:
# - find_package(weft): weft::weft (shared, static), and weft::mpi when the build has libweft-mpi;
# - pkg-config: a consumer built with its flags;
# - every consumer runs without LD_LIBRARY_PATH (RPATHs: CMake's, weft.pc's -rpath, libweft-mpi's
#   $ORIGIN);
# - lib/weft-omp and bin/weft-run run a gcc -fopenmp program on weft, weft-run also once the prefix
#   has moved;
# - one version: the CMake package, weft.pc, weft.h, the library's file name, weft-run, weft-trace.
#   run_install_test.sh <build dir>
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$src/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH LD_PRELOAD
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(find "$prefix" -name 'libweft.so.*.*.*' -print -quit)
[ -n "$lib" ] || fail "no libweft.so installed"
libdir=$(dirname "$lib")

have_mpi=OFF
if [ -e "$build/src/mpi/libweft-mpi.so" ]; then
  have_mpi=ON
  [ -e "$libdir/libweft-mpi.so.0" ] || fail "the build has libweft-mpi, the install does not"
  deps=$(ldd "$libdir/libweft-mpi.so.0")
  grep -q "libweft.so.0 => $libdir/" <<<"$deps" || fail "installed libweft-mpi does not find the libweft beside it: $deps"
fi

# find_package(weft), with weft::mpi required when the build has it.
cmake -S "$src" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DEXPECT_WEFT_MPI=$have_mpi >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"
"$scratch/consumer/consumer_static"
if [ $have_mpi = ON ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  timeout -k 5 60 "$scratch/consumer/consumer_mpi"
fi

# pkg-config: the flags alone make a program that runs.
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs weft)
c++ -std=c++20 "$src/consumer.cpp" $flags -o "$scratch/consumer_pc"
"$scratch/consumer_pc"

# One version.
version=$(cat "$scratch/consumer/weft_version.txt")
pc_version=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion weft)
header_version=$(awk '/^#define WEFT_VERSION_MAJOR /{M=$3} /^#define WEFT_VERSION_MINOR /{m=$3} END{print M "." m}' \
                 "$prefix/include/weft/weft.h")
lib_version=${lib##*/libweft.so.}
run_version=$("$prefix/bin/weft-run" --version)
python=python3
[ -x "$root/.venv/bin/python" ] && python=$root/.venv/bin/python
trace_version=$(PYTHONPATH="$root/tools/weft-trace" "$python" -m weft_trace --version)
[ "$pc_version" = "$version" ] && [ "$header_version" = "${version%.*}" ] && [ "$lib_version" = "$version" ] &&
  [ "$run_version" = "weft-run (weft $version)" ] && [ "$trace_version" = "weft-trace $version" ] ||
  fail "versions differ: CMake package $version, weft.pc $pc_version, weft.h $header_version, libweft.so.$lib_version," \
       "'$run_version', '$trace_version'"

# The installed OpenMP stand-in: an unmodified gcc -fopenmp program runs on weft from <libdir>/weft-omp,
# and through bin/weft-run.
cat > "$scratch/omp.c" <<'C'
#include <omp.h>
#include <stdio.h>
int main(void) {
  int n = 0;
#pragma omp parallel reduction(+ : n)
  n += 1;
  printf("threads %d\n", n);
  return n == omp_get_max_threads() ? 0 : 1;
}
C
gcc -fopenmp "$scratch/omp.c" -o "$scratch/omp"
out=$(OMP_NUM_THREADS=2 WEFT_DISPLAY_ENV=1 LD_LIBRARY_PATH="$libdir/weft-omp" "$scratch/omp" 2>&1)
grep -q "weft: runtime in use" <<<"$out" || fail "lib/weft-omp/libgomp.so.1 did not run the program on weft: $out"
# weft-run finds the libraries relative to itself: move the prefix first.
mv "$prefix" "$scratch/moved"
out=$(OMP_NUM_THREADS=2 WEFT_DISPLAY_ENV=1 "$scratch/moved/bin/weft-run" "$scratch/omp" 2>&1)
grep -q "weft: runtime in use" <<<"$out" || fail "bin/weft-run of a moved prefix did not run the program on weft: $out"
grep -q "^weft-run: LD_LIBRARY_PATH=$scratch/moved/" <<<"$out" || fail "weft-run did not use its own prefix: $out"
echo "install test: find_package (shared, static$([ $have_mpi = ON ] && echo ", weft::mpi")), pkg-config," \
     "without LD_LIBRARY_PATH; lib/weft-omp and bin/weft-run; one version, $version"
