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
echo "install test: find_package (shared, static) and pkg-config consumers ran"
