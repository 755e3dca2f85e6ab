// Bad input to the distributed taskiter is refused by name on every rank, never hung:
//   mismatch      rank 1 records a round whose task 2 differs (another access): every rank's
//                 weft_graph_end returns WEFT_ERR_GRAPH_CHANGED, and the task is named on stderr;
//   unregistered  a task accesses an address that starts no region: its submit and every rank's
//                 weft_graph_end fail;
//   rank          weft_dist_task_rank / weft_dist_set_next_rank with a rank outside the communicator;
//   alloc         ranks ask weft_dist_alloc for different sizes: NULL on every rank;
//   region        a region outside the symmetric heap, and one overlapping another.
// After each case a correct loop still runs and gives the right result.
#include <mpi.h>
#include <weft/dist.h>
#include <weft/mpi.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstring>

namespace {

int rank_ = 0, ranks_ = 1;
int failures = 0;

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      std::fprintf(stderr, "rank %d: FAILED: ", rank_);       \
      std::fprintf(stderr, __VA_ARGS__);                      \
      std::fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
      ++failures;                                             \
    }                                                         \
  } while (0)

struct add_args {
  double* to;
  const double* from;
};
void add(void* p) {
  auto* a = static_cast<add_args*>(p);
  a->to[0] += a->from[0] + 1;
}
void add_twice(void* p) {
  auto* a = static_cast<add_args*>(p);
  a->to[0] += 2 * a->from[0] + 1;
}

// A chain over ranks: cell i (home i % ranks) += cell i-1 + 1, `steps` times. differ: this rank
// gives task 2 another function (a different round).
int chain(double* cells, int n, int steps, bool differ, const void* stray) {
  weft_graph_options_t o{};
  o.mode = WEFT_GRAPH_DISTRIBUTED;
  o.iterations = steps;
  if (weft_graph_begin_with(&o) != WEFT_OK) return -1;
  weft_graph_iteration();
  for (int i = 1; i < n; ++i) {
    add_args a{cells + 8 * i, cells + 8 * (i - 1)};
    weft_task_t* t = weft_task_create(differ && i == 2 ? add_twice : add, &a, sizeof a, WEFT_TASK_DEFAULT);
    weft_task_depend(t, WEFT_DEP_INOUT, a.to, sizeof(double));
    weft_task_depend(t, WEFT_DEP_IN, a.from, sizeof(double));
    if (stray && i == 1) weft_task_depend(t, WEFT_DEP_IN, stray, sizeof(double));
    int s = weft_task_submit(t);
    if (stray && i == 1) EXPECT(s == WEFT_ERR_INVALID_ARGUMENT, "submit with an unregistered access returned %d", s);
  }
  return weft_graph_end();
}

double* chain_cells(int n) {
  auto* cells = static_cast<double*>(weft_dist_alloc(sizeof(double) * 8 * static_cast<std::size_t>(n)));
  for (int i = 0; i < n; ++i) weft_dist_region(cells + 8 * i, sizeof(double), i % ranks_);
  return cells;
}

void good_loop() {
  const int n = 6, steps = 4;
  double* cells = chain_cells(n);
  int s = chain(cells, n, steps, false, nullptr);
  EXPECT(s == WEFT_OK, "a correct loop after the bad one returned %d", s);
  double ref[n] = {};
  for (int k = 0; k < steps; ++k)
    for (int i = 1; i < n; ++i) ref[i] += ref[i - 1] + 1;
  for (int i = 0; i < n; ++i)
    if (i % ranks_ == rank_) EXPECT(cells[8 * i] == ref[i], "cell %d: %g, expected %g", i, cells[8 * i], ref[i]);
  weft_dist_free(cells);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
  const char* which = argc > 1 ? argv[1] : "";
  if (!std::strcmp(which, "mismatch")) {
    double* cells = chain_cells(5);
    int s = chain(cells, 5, 3, rank_ == 1 % ranks_ && ranks_ > 1, nullptr);
    if (ranks_ > 1) EXPECT(s == WEFT_ERR_GRAPH_CHANGED, "mismatched rounds: weft_graph_end returned %d", s);
    weft_dist_free(cells);
  } else if (!std::strcmp(which, "unregistered")) {
    double* cells = chain_cells(4);
    int s = chain(cells, 4, 2, false, rank_ == 0 ? cells + 8 * 4 - 4 : nullptr);
    EXPECT(s != WEFT_OK, "a round with an unregistered access: weft_graph_end returned %d", s);
    weft_dist_free(cells);
  } else if (!std::strcmp(which, "rank")) {
    EXPECT(weft_dist_set_next_rank(ranks_) == WEFT_ERR_INVALID_ARGUMENT, "weft_dist_set_next_rank(%d) accepted",
           ranks_);
    EXPECT(weft_dist_set_next_rank(-1) == WEFT_ERR_INVALID_ARGUMENT, "weft_dist_set_next_rank(-1) accepted");
    double x = 0;
    weft_task_t* t = weft_task_create(add, &x, sizeof x, WEFT_TASK_DEFAULT);
    EXPECT(weft_dist_task_rank(t, ranks_ + 3) == WEFT_ERR_INVALID_ARGUMENT, "weft_dist_task_rank(%d) accepted",
           ranks_ + 3);
    weft_task_discard(t);
  } else if (!std::strcmp(which, "alloc")) {
    void* p = weft_dist_alloc(4096 + static_cast<std::size_t>(rank_) * 64);
    if (ranks_ > 1) EXPECT(p == nullptr, "weft_dist_alloc with different sizes returned %p", p);
    if (p) weft_dist_free(p);
  } else if (!std::strcmp(which, "region")) {
    static double outside[4];
    EXPECT(weft_dist_region(outside, sizeof outside, 0) == WEFT_ERR_INVALID_ARGUMENT,
           "a region outside the heap accepted");
    auto* d = static_cast<double*>(weft_dist_alloc(4096));
    EXPECT(weft_dist_region(d, 256, 0) == WEFT_OK, "a region refused");
    EXPECT(weft_dist_region(d + 16, 256, 0) == WEFT_ERR_INVALID_ARGUMENT, "an overlapping region accepted");
    EXPECT(weft_dist_region(d + 64, 64, ranks_) == WEFT_ERR_INVALID_ARGUMENT, "home %d accepted", ranks_);
    EXPECT(weft_dist_home(d + 3) == 0 && weft_dist_home(d + 40) == -1, "weft_dist_home");
    weft_dist_free(d);
    // 2-D tiles of a 16 x 16 matrix: the 4 x 4 tiles of one row of tiles interleave, never overlap.
    auto* m = static_cast<double*>(weft_dist_alloc(sizeof(double) * 256));
    for (int ti = 0; ti < 4; ++ti)
      for (int tj = 0; tj < 4; ++tj)
        EXPECT(weft_dist_region_2d(m + ti * 64 + tj * 4, 4, 4 * sizeof(double), 16 * sizeof(double),
                                   (ti + tj) % ranks_) == WEFT_OK,
               "tile (%d, %d) refused", ti, tj);
    EXPECT(weft_dist_home(m + 16 * 5 + 9) == (1 + 2) % ranks_, "weft_dist_home inside tile (1, 2)");
    EXPECT(weft_dist_region_2d(m + 2, 2, 4 * sizeof(double), 16 * sizeof(double), 0) == WEFT_ERR_INVALID_ARGUMENT,
           "a 2-D region overlapping two tiles accepted");
    EXPECT(weft_dist_region(m + 16 * 7 + 15, sizeof(double), 0) == WEFT_ERR_INVALID_ARGUMENT,
           "a cell of tile (1, 3) accepted as a region");
    EXPECT(weft_dist_region_2d(m, 2, 64, 32, 0) == WEFT_ERR_INVALID_ARGUMENT, "a stride below the row accepted");
    weft_dist_free(m);
  } else {
    std::fprintf(stderr, "usage: dist_errors mismatch|unregistered|rank|alloc|region\n");
    ++failures;
  }
  good_loop();
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank_ == 0 && !any) std::printf("%s: refused as expected on %d rank(s)\n", which, ranks_);
  MPI_Finalize();
  return any ? 1 : 0;
}
