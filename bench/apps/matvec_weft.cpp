// matvec_weft: multi-matvec and dense Jacobi (matvec_kernels.h) on native weft, the same task graph
// as matvec_omp's omp-tasks.
//
//   matvec_weft [--kernel matvec|jacobi] [--variant V] [-n N] [-t T] [-s STEPS] [-p P] [--no-check]
//
// Variants:
//   weft             one task per row block per step through weft::spawn (accesses gathered as a
//                    weft::accesses list), one weft_taskwait at the end. matvec: in x (whole vector), inout y block;
//                    jacobi: in every block of the old vector, out the block of the new one. Labelled
//                    "matvec" / "jacobi" for WEFT_TRACE.
//   weft-persistent  the same loop in a weft::graph, re-execute mode, one g.iteration per step;
//                    jacobi records two steps per round (options.unroll = 2: the vectors swap).
//   weft-taskiter    taskiter mode, options.iterations = STEPS: the body runs for the recorded
//                    round only (1 step, jacobi 2), weft_graph_end replays it for the rest.
// The closures hold the problem's address, the block index and the step's parity only, so the tasks
// of every round are identical.
//
// Workers: WEFT_NUM_THREADS, set from -p before weft_init. Check, error= and gflops as matvec_omp.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "app_common.h"
#include "matvec_kernels.h"

namespace {

const char* const variants[] = {"weft", "weft-persistent", "weft-taskiter", nullptr};
enum { V_WEFT, V_PERSISTENT, V_TASKITER };

void check(int status, const char* call) {
  if (status != WEFT_OK) app_die("matvec_weft: %s: %s", call, weft_strerror(status));
}

// The accesses of the next task (reused: the producer is one thread).
std::vector<weft::access> deps;

// Spawns f with the accesses gathered in deps.
template <class F>
void spawn(const char* label, F f) {
  weft::spawn(f, weft::accesses(deps), weft::label(label));
  deps.clear();
}

// Block b of vector v: its first element names it, its bytes are the length (traces).
weft::access block(weft_dep_type type, const double* v, const mv_problem& pb, int b) {
  return {type, v + pb.lo[b], static_cast<std::size_t>(pb.lo[b + 1] - pb.lo[b]) * sizeof(double)};
}

void submit_step(mv_problem* pb, long s) {
  const int T = pb->T;
  if (pb->kernel == MV_MATVEC) {
    for (int b = 0; b < T; ++b) {
      deps.push_back(weft::in(pb->x, static_cast<std::size_t>(pb->n) * sizeof(double)));
      deps.push_back(block(WEFT_DEP_INOUT, pb->v[0], *pb, b));
      spawn("matvec", [pb, b] { mv_matvec_rows(pb->A, pb->n, pb->x, pb->v[0], pb->lo[b], pb->lo[b + 1]); });
    }
  } else {
    const int from = static_cast<int>(s & 1);
    for (int b = 0; b < T; ++b) {
      for (int j = 0; j < T; ++j) deps.push_back(block(WEFT_DEP_IN, pb->v[from], *pb, j));
      deps.push_back(block(WEFT_DEP_OUT, pb->v[1 - from], *pb, b));
      spawn("jacobi", [pb, b, from] {
        mv_jacobi_rows(pb->A, pb->diag, pb->b, pb->n, pb->v[from], pb->v[1 - from], pb->lo[b], pb->lo[b + 1]);
      });
    }
  }
}

void run(mv_problem* pb, long steps, int variant) {
  weft_graph_options_t opt;
  std::memset(&opt, 0, sizeof opt);
  opt.unroll = pb->kernel == MV_JACOBI ? 2 : 1;
  switch (variant) {
    case V_WEFT:
      for (long s = 0; s < steps; ++s) submit_step(pb, s);
      check(weft_taskwait(), "weft_taskwait");
      break;
    case V_PERSISTENT: {
      opt.mode = WEFT_GRAPH_REEXECUTE;
      weft::graph g(opt);
      for (long s = 0; s < steps; ++s) g.iteration([pb, s] { submit_step(pb, s); });
      g.end();
      break;
    }
    case V_TASKITER: {
      opt.mode = WEFT_GRAPH_TASKITER;
      opt.iterations = steps;
      weft::graph g(opt);
      for (long s = 0; s < opt.unroll && s < steps; ++s) g.iteration([pb, s] { submit_step(pb, s); });
      g.end();
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  mv_options o;
  mv_parse(&o, argc, argv, "matvec_weft", variants);
  if (o.threads > 0) {
    char value[16];
    std::snprintf(value, sizeof value, "%d", o.threads);
    setenv("WEFT_NUM_THREADS", value, 1);
  }
  check(weft_init(), "weft_init");
  mv_problem pb;
  if (mv_build(&pb, o.kernel, o.n, o.T) != 0) app_die("matvec_weft: out of memory for N = %ld", o.n);
  deps.reserve(static_cast<std::size_t>(o.T) + 4);
  weft_reset_stats();

  double t0 = app_now();
  try {
    run(&pb, o.steps, o.variant_index);
  } catch (const weft::error& e) {
    app_die("matvec_weft: %s", e.what());
  }
  double seconds = app_now() - t0;
  weft_stats_t stats;
  weft_get_stats(&stats);

  double error = 0.0;
  int ok = 1;
  if (o.check) {
    error = mv_check(&pb, o.steps, "matvec_weft");
    ok = error == 0.0;
  }

  app_result res;
  std::memset(&res, 0, sizeof res);
  res.app = mv_app_name(o.kernel);
  res.variant = o.variant;
  res.runtime = "weft";
  res.threads = weft_num_workers();
  res.size = o.n;
  res.block = o.T;
  res.iters = o.steps;
  res.seconds = seconds;
  res.gflops = mv_gflops(&o, seconds);
  res.tasks = static_cast<long long>(o.T) * o.steps;
  res.edges = static_cast<long long>(stats.edges_created);
  res.ok = ok;
  res.error = error;
  app_print_result(&res);
  mv_free(&pb);
  check(weft_finalize(), "weft_finalize");
  return ok ? 0 : 1;
}
