/* fork() in a program that has used OpenMP: the child inherits the runtime's memory but not its
 * threads. The child may still run OpenMP (parallel regions get one thread on weft, tasks run)
 * and exit() normally: its exit must not wait for threads that exist only in the parent. Forked
 * from the sequential part after parallel regions and a pause, and from inside a region. weft
 * only: GCC's libgomp hangs in the child's parallel region (its threads stayed in the parent). */
#include "omp_test.h"

#include <sys/wait.h>

/* Waits for the child (the watchdog reports a hang); it must exit with status 0. */
static void reap(pid_t pid, const char* what) {
  CHECK(pid > 0, "fork failed (%s)", what);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid, "waitpid failed (%s)", what);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status 0x%x", what, status);
}

/* The child's OpenMP work: a region, tasks, a taskwait; then exit() runs the atexit handlers. */
static void child_work(void) {
  int sum = 0, members = 0;
#pragma omp parallel reduction(+ : members)
  {
    members = 1;
#pragma omp single
    for (int i = 1; i <= 10; i++) {
#pragma omp task shared(sum) firstprivate(i)
      {
#pragma omp atomic
        sum += i;
      }
    }
  }
  exit(sum == 55 && members >= 1 ? 0 : 3);
}

int main(void) {
  PHASE("fork after parallel regions");
  for (int rep = 0; rep < 3; rep++) {
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n = 1;
    CHECK(n == omp_test_threads() || n >= 1, "team of %d", n);
    pid_t pid = fork();
    if (pid == 0) child_work();
    reap(pid, "after a region");
  }

  PHASE("fork after a pause");
  {
#pragma omp parallel
    {}
    CHECK(omp_pause_resource_all(omp_pause_hard) == 0, "hard pause refused");
#pragma omp parallel for
    for (int i = 0; i < 8; i++) {
    }
    pid_t pid = fork();
    if (pid == 0) child_work();
    reap(pid, "after a pause");
  }

  PHASE("fork inside a parallel region");
  {
    pid_t pid = -1;
#pragma omp parallel
#pragma omp single
    {
      pid = fork();
      if (pid == 0) exit(0);
    }
    reap(pid, "inside a region");
  }

  PHASE("OpenMP in the parent afterwards");
  {
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n = 1;
    CHECK(n >= 1, "team of %d after the children", n);
  }
  PASS();
}
