// cholesky_weft: tiled Cholesky as native weft tasks (weft.hpp), linked to libweft.
//
//   weft             weft::spawn per tile kernel with weft::in / weft::inout on the tiles, then
//                    weft::taskwait. Timed from the first task created to the end of the taskwait.
//                    One RESULT line per repetition.
//   weft-persistent  one weft::graph (re-execute mode) around all R repetitions: the first is
//                    recorded, the others replayed. Every repetition factorises the same buffer and
//                    starts with one copy task per lower tile (inout on the tile, the original tile
//                    copied back), ordered after the previous repetition's tasks on that tile with no
//                    barrier. As omp-persistent (cholesky_omp.c): ONE RESULT line, iters=R,
//                    seconds = all R repetitions (copy tasks included, first task created to the end
//                    of the graph), gflops = R n^3/3 / seconds, tasks = all tasks of the R repetitions
//                    (copy tasks included), edges over all of them; the check runs on the last result.
//
// Tasks are labelled potrf / trsm / syrk / gemm / copy for traces (WEFT_TRACE=file). -p P sets
// WEFT_NUM_THREADS=P before weft_init. BLAS inside tasks is single-threaded.
#include <weft/weft.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "cholesky_kernels.h"

namespace {

const char* const variants[] = {"weft", "weft-persistent", nullptr};

long long factor_tasks(chol_matrix* m) {
  const long nt = m->nt;
  const int b = static_cast<int>(m->b);
  const std::size_t tb = static_cast<std::size_t>(b) * b * sizeof(double);  // a tile, for traces
  long long tasks = 0;
  for (long k = 0; k < nt; ++k) {
    double* akk = chol_tile(m, k, k);
    weft::spawn([=] { chol_potrf(akk, b); }, weft::inout(akk, tb), weft::label("potrf"));
    ++tasks;
    for (long i = k + 1; i < nt; ++i) {
      double* aik = chol_tile(m, i, k);
      weft::spawn([=] { chol_trsm(akk, aik, b); }, weft::in(akk, tb),
                  weft::inout(aik, tb), weft::label("trsm"));
      ++tasks;
    }
    for (long i = k + 1; i < nt; ++i) {
      double* aik = chol_tile(m, i, k);
      for (long j = k + 1; j < i; ++j) {
        double* ajk = chol_tile(m, j, k);
        double* aij = chol_tile(m, i, j);
        weft::spawn([=] { chol_gemm(aik, ajk, aij, b); }, weft::in(aik, tb),
                    weft::in(ajk, tb), weft::inout(aij, tb), weft::label("gemm"));
        ++tasks;
      }
      double* aii = chol_tile(m, i, i);
      weft::spawn([=] { chol_syrk(aik, aii, b); }, weft::in(aik, tb),
                  weft::inout(aii, tb), weft::label("syrk"));
      ++tasks;
    }
  }
  return tasks;
}

long long copy_tasks(chol_matrix* w, const chol_matrix* a) {
  const long nt = w->nt, b = w->b;
  const std::size_t tb = static_cast<std::size_t>(b) * b * sizeof(double);
  long long tasks = 0;
  for (long j = 0; j < nt; ++j)
    for (long i = j; i < nt; ++i) {
      double* dst = chol_tile(w, i, j);
      const double* src = chol_tile(a, i, j);
      weft::spawn([=] { chol_copy_tile(dst, src, b); }, weft::inout(dst, tb), weft::label("copy"));
      ++tasks;
    }
  return tasks;
}

long long weft_edges() {
  weft_stats_t s;
  return weft_get_stats(&s) == WEFT_OK ? static_cast<long long>(s.edges_created) : -1;
}

int run_tasks(const chol_opts* o, const chol_matrix* a, chol_matrix* w) {
  int failed = 0;
  for (int rep = 0; rep < o->reps; ++rep) {
    chol_copy(w, a);
    weft_reset_stats();
    const double t0 = app_now();
    const long long tasks = factor_tasks(w);
    weft::taskwait();
    const double t1 = app_now();
    app_result r;
    chol_result_init(&r, o, "weft", weft_num_workers());
    r.seconds = t1 - t0;
    r.gflops = chol_gflops(o->n, r.seconds, 1);
    r.tasks = tasks;
    r.edges = weft_edges();
    chol_verify(&r, o, a, w, weft_num_workers());
    app_print_result(&r);
    failed |= !r.ok;
  }
  return failed;
}

int run_persistent(const chol_opts* o, const chol_matrix* a, chol_matrix* w) {
  weft_reset_stats();
  long long tasks = 0;
  weft_graph_options_t options{};
  options.mode = WEFT_GRAPH_REEXECUTE;
  const double t0 = app_now();
  {
    weft::graph g(options);
    for (int rep = 0; rep < o->reps; ++rep)
      g.iteration([&] {
        tasks += copy_tasks(w, a);
        tasks += factor_tasks(w);
      });
    g.end();
  }
  const double t1 = app_now();
  app_result r;
  chol_result_init(&r, o, "weft", weft_num_workers());
  r.iters = o->reps;
  r.seconds = t1 - t0;
  r.gflops = chol_gflops(o->n, r.seconds, o->reps);
  r.tasks = tasks;
  r.edges = weft_edges();
  chol_verify(&r, o, a, w, weft_num_workers());
  app_print_result(&r);
  return !r.ok;
}

}  // namespace

int main(int argc, char** argv) {
  chol_opts o;
  chol_parse(argc, argv, "cholesky_weft", variants, &o);
  app_blas_threads(1);
  if (o.threads > 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%d", o.threads);
    setenv("WEFT_NUM_THREADS", text, 1);
  }
  if (int status = weft_init(); status != WEFT_OK) {
    std::fprintf(stderr, "cholesky_weft: weft_init: %s\n", weft_strerror(status));
    return 1;
  }
  chol_matrix a, w;
  chol_alloc(&a, &o);
  chol_alloc(&w, &o);
  chol_generate(&a);
  int failed = 1;
  try {
    failed = std::strcmp(o.variant, "weft") == 0 ? run_tasks(&o, &a, &w) : run_persistent(&o, &a, &w);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cholesky_weft: %s\n", e.what());
  }
  weft_finalize();
  free(a.t);
  free(w.t);
  return failed ? 1 : 0;
}
