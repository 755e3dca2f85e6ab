/* Bad input through the OpenMP door: each case (argv[1]) makes one call weft refuses, and the
 * CTest registration checks that weft stops with a message naming what was refused. On libgomp
 * these programs are not run (it takes a null address as any other key).
 *   null_depend      depend(out:) on a null address, gcc's first depend format (in/out/inout)
 *   null_depend_set  the same in gcc's second format (a mutexinoutset among the clauses) */
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  int* volatile none = NULL; /* named by depend clauses only */
  (void)none;
  int x = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    if (strcmp(what, "null_depend") == 0) {
#pragma omp task depend(out : none[0]) depend(in : x)
      x++;
    } else if (strcmp(what, "null_depend_set") == 0) {
#pragma omp task depend(mutexinoutset : none[0]) depend(in : x)
      x++;
    }
#pragma omp taskwait
  }
  printf("not refused: %s (x = %d)\n", what, x);
  return 0;
}
