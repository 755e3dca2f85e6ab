#!/bin/bash
# omp.symbols_covered: every GOMP_*/omp_* symbol that a test program imports must be defined by
# libweft.so, with a symbol version that glibc will bind the program's versioned reference to
# (the same version node, or no version / the base version; an unversioned reference, such as a
# weak one to what the build-time libgomp lacks, binds to the one version). A symbol libweft
# lacks, or exports under another version, is silently resolved from the real libgomp.so.1 under
# LD_PRELOAD: the program would then not be running on weft.
#   symbols_covered.sh LIBWEFT PROGRAM...
set -u
lib=$1
shift
if [ ! -f "$lib" ]; then
  echo "FAIL: $lib does not exist" >&2
  exit 1
fi
NM=${NM:-nm}
OBJDUMP=${OBJDUMP:-objdump}

# Base version node of the library (symbols there bind like unversioned ones), if any.
base=$($OBJDUMP -p "$lib" 2>/dev/null | awk '/^Version definitions:/{d=1; next} d && $2=="0x01"{print $4; exit}')

# name -> space-separated list of versions ("-" = unversioned)
declare -A defined
while read -r sym; do
  name=${sym%%@*}
  if [[ $sym == *@* ]]; then ver=${sym##*@}; else ver=-; fi
  [[ -n $base && $ver == "$base" ]] && ver=-
  defined[$name]="${defined[$name]:-} $ver"
done < <($NM -D --defined-only "$lib" | awk '{print $NF}' | grep -E '^(GOMP_|omp_)')

declare -A missing mismatch
checked=0
for prog in "$@"; do
  while read -r sym; do
    name=${sym%%@*}
    if [[ $sym == *@* ]]; then ver=${sym##*@}; else ver=-; fi
    checked=$((checked + 1))
    vers=${defined[$name]:-}
    if [[ -z $vers ]]; then
      missing[$sym]="${missing[$sym]:-} $(basename "$prog")"
    elif [[ $ver != - && " $vers " != *" - "* && " $vers " != *" $ver "* ]]; then
      mismatch[$sym]="libweft has:$vers; needed by $(basename "$prog")"
    fi
  done < <($NM -D --undefined-only "$prog" | awk '{print $NF}' | grep -E '^(GOMP_|omp_)')
done

status=0
for sym in $(printf '%s\n' "${!missing[@]}" | sort); do
  echo "MISSING from libweft: $sym (imported by${missing[$sym]})"
  status=1
done
for sym in $(printf '%s\n' "${!mismatch[@]}" | sort); do
  echo "VERSION MISMATCH: $sym: ${mismatch[$sym]} (an LD_PRELOADed libweft would not bind it)"
  status=1
done
if [ $status -eq 0 ]; then
  echo "PASS: all $checked GOMP_*/omp_* imports of $# programs are defined by $(basename "$lib")"
else
  echo "FAIL: the symbols above would fall through to libgomp"
fi
exit $status
