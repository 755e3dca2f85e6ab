#!/usr/bin/env bash
# Usage: bench/apps/loc.sh [-h | --help] [FILE...]
#
# Lines of code of the benchmarks' control code, the way of paper 003's Table 2 (§7.4): the main
# loop only, without argument parsing, allocation, initialisation or verification, and without the
# kernels (shared by every variant). A source marks its control code itself:
#
#   /* LOC-BEGIN jacobi */      (or // LOC-BEGIN jacobi; the name is optional)
#   ... counted ...
#   /* LOC-END */
#
# Counted: the non-blank lines between the two marker lines that are not only comment (a line of
# code with a trailing comment counts; pragmas count). Several regions with the same name in one
# file add up (a helper the loop calls, as TAMPI's send and receive tasks). A region without a name
# takes the file's name less its variant suffix (heat_dist.cpp: heat).
#
# Files: every C/C++ source or header under bench/apps holding a LOC-BEGIN marker, or the FILEs
# given. Columns: one per file, fork-join MPI + OpenMP first (*_omp.c), then native weft with
# task-aware MPI (TAMPI-style, *_weft.cpp), then the distributed taskiter (*_dist.cpp), then the
# others; a row's other cells also give the change against its fork-join count, as Table 2 does.
# Exit status 1 when a file's markers do not pair up.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ${1:-} in
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

files=()
if (($#)); then
  files=("$@")
else
  while IFS= read -r f; do files+=("$f"); done < <(grep -l -E 'LOC-BEGIN' "$here"/*.c "$here"/*.cpp "$here"/*.h "$here"/*.hpp 2>/dev/null | sort)
fi
((${#files[@]})) || { echo "loc.sh: no file holds a LOC-BEGIN marker" >&2; exit 1; }
for f in "${files[@]}"; do [ -r "$f" ] || { echo "loc.sh: cannot read $f" >&2; exit 2; }; done

# One record per region name and file: file <TAB> name <TAB> lines <TAB> where (first-last, ...).
records=$(awk '
  function stem(path,   s) {
    s = path; sub(/.*\//, "", s); sub(/\.[^.]*$/, "", s)
    sub(/(_mpi_omp|_mpi_weft|_mpi|_omp|_weft|_dist)$/, "", s)
    return s
  }
  # The line less its comments (block comments may span lines: in_block carries over).
  function code(line,   out, i, n, c, two, q) {
    out = ""; n = length(line); i = 1
    while (i <= n) {
      c = substr(line, i, 1); two = substr(line, i, 2)
      if (in_block) { if (two == "*/") { in_block = 0; i += 2 } else i++; continue }
      if (in_str) {
        out = out c
        if (c == "\\") { out = out substr(line, i + 1, 1); i += 2; continue }
        if (c == q) in_str = 0
        i++; continue
      }
      if (c == "\"" || c == "\047") { in_str = 1; q = c; out = out c; i++; continue }
      if (two == "//") break
      if (two == "/*") { in_block = 1; i += 2; continue }
      out = out c; i++
    }
    in_str = 0  # no string spans lines
    return out
  }
  FNR == 1 { in_block = 0; inside = 0 }
  {
    if (index($0, "LOC-BEGIN")) {
      if (inside) { printf "loc.sh: %s:%d: LOC-BEGIN inside the region opened at line %d\n", FILENAME, FNR, opened > "/dev/stderr"; bad = 1 }
      rest = substr($0, index($0, "LOC-BEGIN") + 9)
      split(rest, w, /[ \t]+/)
      name = (w[1] != "" ? w[1] : w[2])
      if (name == "" || name ~ /^\*/) name = stem(FILENAME)
      inside = 1; opened = FNR; count = 0
      code($0)  # the marker line itself: only its comment state matters
      next
    }
    if (index($0, "LOC-END")) {
      if (!inside) { printf "loc.sh: %s:%d: LOC-END without LOC-BEGIN\n", FILENAME, FNR > "/dev/stderr"; bad = 1; next }
      key = FILENAME "\t" name
      if (!(key in lines)) order[++nkeys] = key
      lines[key] += count
      where[key] = where[key] (where[key] == "" ? "" : ",") opened "-" FNR
      inside = 0; code($0)
      next
    }
    c = code($0)
    if (inside && c ~ /[^ \t\r]/) count++
  }
  END {
    for (k = 1; k <= nkeys; ++k) print order[k] "\t" lines[order[k]] "\t" where[order[k]]
    if (bad) exit 1
  }
' "${files[@]}")
status=$?
# A region left open at the end of a file (awk sees only the last file at END): look for it here.
for f in "${files[@]}"; do
  b=$(grep -c 'LOC-BEGIN' "$f")
  e=$(grep -c 'LOC-END' "$f")
  if [ "$b" != "$e" ]; then echo "loc.sh: $f: $b LOC-BEGIN against $e LOC-END" >&2; status=1; fi
done
[ -n "$records" ] || exit 1

echo "Control code, lines (non-blank, non-comment, between LOC-BEGIN and LOC-END; paper 003 Table 2's measure)"
echo
awk -F'\t' '
  function kind(f,   b) {
    b = f; sub(/.*\//, "", b)
    if (b ~ /_omp\.[^.]*$/) return 0
    if (b ~ /_weft\.[^.]*$/) return 1
    if (b ~ /_dist\.[^.]*$/) return 2
    return 3
  }
  function put(i, text) { if (i == nf) printf "  %s", text; else printf "  %-" width[i] "s", text }
  function label(k) { return k == 0 ? "fork-join MPI+OpenMP" : k == 1 ? "TAMPI-style (weft)" : k == 2 ? "distributed taskiter" : "other" }
  {
    base = $1; sub(/.*\//, "", base)
    if (!(base in seen)) { seen[base] = 1; files[++nf] = base; fkind[base] = kind(base) }
    if (!($2 in rseen)) { rseen[$2] = 1; rows[++nr] = $2 }
    cell[$2, base] = $3
    detail[++nd] = sprintf("  %-20s %-10s %4d  (lines %s)", base, $2, $3, $4)
  }
  END {
    # columns: by kind, then by name (insertion sort: few files)
    for (i = 2; i <= nf; ++i) {
      x = files[i]; j = i - 1
      while (j >= 1 && (fkind[files[j]] > fkind[x] || (fkind[files[j]] == fkind[x] && files[j] > x))) { files[j + 1] = files[j]; --j }
      files[j + 1] = x
    }
    w = 12
    for (i = 1; i <= nf; ++i) { width[i] = length(files[i]); if (length(label(fkind[files[i]])) > width[i]) width[i] = length(label(fkind[files[i]])); if (width[i] < 14) width[i] = 14 }
    printf "%-" w "s", "benchmark"; for (i = 1; i <= nf; ++i) put(i, label(fkind[files[i]])); printf "\n"
    printf "%-" w "s", ""; for (i = 1; i <= nf; ++i) put(i, files[i]); printf "\n"
    for (r = 1; r <= nr; ++r) {
      base = ""
      for (i = 1; i <= nf; ++i) if (fkind[files[i]] == 0 && ((rows[r], files[i]) in cell)) { base = cell[rows[r], files[i]]; break }
      printf "%-" w "s", rows[r]
      for (i = 1; i <= nf; ++i) {
        if (!((rows[r], files[i]) in cell)) { put(i, "-"); continue }
        v = cell[rows[r], files[i]]
        t = v ""
        if (base != "" && fkind[files[i]] != 0 && base > 0) t = sprintf("%d (%+.0f%%)", v, 100.0 * (v - base) / base)
        put(i, t)
      }
      printf "\n"
    }
    printf "\nRegions (file, name, lines, marker lines):\n"
    for (k = 1; k <= nd; ++k) print detail[k]
  }
' <<<"$records"
exit $status
