#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs a consumer project with
# find_package(weft) (shared and static) and with pkg-config.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$src" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
LD_LIBRARY_PATH="$scratch/prefix/lib" "$scratch/consumer/consumer"
"$scratch/consumer/consumer_static"
flags=$(PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig" pkg-config --cflags --libs weft)
c++ -std=c++20 "$src/consumer.cpp" $flags -o "$scratch/consumer_pc"
LD_LIBRARY_PATH="$scratch/prefix/lib" "$scratch/consumer_pc"
# The installed OpenMP stand-in: an unmodified gcc -fopenmp program runs on weft from <libdir>/weft-omp.
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
out=$(OMP_NUM_THREADS=2 WEFT_DISPLAY_ENV=1 LD_LIBRARY_PATH="$scratch/prefix/lib/weft-omp" "$scratch/omp" 2>&1)
grep -q "weft: runtime in use" <<<"$out" || { echo "install test: lib/weft-omp/libgomp.so.1 did not run the program on weft: $out"; exit 1; }
echo "install test: find_package (shared, static), pkg-config and lib/weft-omp consumers ran"
