#!/usr/bin/env bash
# What libweft.so asks of the machine it runs on. With its C++ runtime inside
# (WEFT_STATIC_CXX_RUNTIME), it needs the C library alone, as GCC's libgomp does: a C or Fortran
# OpenMP program that loads it maps no libstdc++, libm, libgcc_s or Boost. Either way it exports
# C symbols only, so the runtime inside can never stand in for a C++ program's own.
#   library_dependencies.sh <libweft.so> <runtime inside: ON|OFF>
set -euo pipefail
lib=$1
inside=$2
fail=0
needed=$(readelf -dW "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
echo "NEEDED: $needed"
if [[ $inside == ON ]]; then
  for n in $needed; do
    case $n in
      libc.so.*|ld-linux*) ;;
      *) echo "FAIL: libweft.so needs $n (expected the C library alone)"; fail=1 ;;
    esac
  done
fi
cxx=$(nm -D --defined-only "$lib" | awk '$3 ~ /^_Z/ {print $3}' | head -5)
if [[ -n $cxx ]]; then
  echo "FAIL: libweft.so exports C++ symbols, e.g.:"
  echo "$cxx"
  fail=1
fi
exit $fail
