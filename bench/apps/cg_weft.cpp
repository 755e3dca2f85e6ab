// cg_weft: conjugate gradient on the 27-point Poisson matrix (cg_kernels.h) on native weft, the same
// task graph as cg_omp's omp-tasks.
//
//   cg_weft [--variant V] [-n NX] [-i ITERS] [-t T] [-p P] [--no-check]
//
// Variants:
//   weft             tasks through weft::spawn (the SpMV's accesses, known at run time, as a
//                    weft::accesses list), one weft_taskwait after the last iteration. Per iteration: T SpMV tasks (in: the p chunks the rows' columns reach,
//                    out: q chunk), T dot partials (out: pq_part[c]), one alpha task (in: the T
//                    partials and rr, out: alpha), T + T axpys (in: alpha, inout: x / r chunk), T dot
//                    partials of r, one beta task (in: the partials, inout: rr, out: beta), T xpby
//                    (in: beta, inout: p chunk). Tasks are labelled (spmv, dot-pq, alpha, axpy-x,
//                    axpy-r, dot-rr, beta, xpby) for WEFT_TRACE.
//   weft-persistent  the same loop in a weft::graph, re-execute mode: one g.iteration per CG
//                    iteration; iteration 0 is recorded, later ones matched and replayed. The
//                    closures hold only the problem's address and the chunk index, and the scalars
//                    are read and written through that address: every iteration's tasks are identical.
//   weft-taskiter    taskiter mode, options.iterations = ITERS: the body runs once (the recording);
//                    weft_graph_end replays it ITERS - 1 times.
//
// Workers: WEFT_NUM_THREADS, set from -p before weft_init. Check, error= and gflops as cg_omp.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "app_common.h"
#include "cg_kernels.h"

namespace {

const char* const variants[] = {"weft", "weft-persistent", "weft-taskiter", nullptr};
enum { V_WEFT, V_PERSISTENT, V_TASKITER };

void check(int status, const char* call) {
  if (status != WEFT_OK) app_die("cg_weft: %s: %s", call, weft_strerror(status));
}

// The accesses of the next task (reused: the producer is one thread).
std::vector<weft::access> deps;

// Spawns f with the accesses gathered in deps.
template <class F>
void spawn(const char* label, F f) {
  weft::spawn(f, weft::accesses(deps), weft::label(label));
  deps.clear();
}

// Chunk c of vector v: its first element names it, its bytes are the length (traces).
weft::access chunk(weft_dep_type type, const double* v, const cg_chunks& ck, int c) {
  return {type, v + ck.lo[c], static_cast<std::size_t>(ck.lo[c + 1] - ck.lo[c]) * sizeof(double)};
}

// The tasks of one CG iteration; every closure holds the problem's address and a chunk index only.
void submit_iteration(cg_problem* pb) {
  const cg_chunks& ck = pb->ck;
  cg_state& st = pb->st;
  const int T = ck.T;
  for (int c = 0; c < T; ++c) {
    for (int j = ck.reach_lo[c]; j <= ck.reach_hi[c]; ++j) deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, j));
    deps.push_back(chunk(WEFT_DEP_OUT, st.q, ck, c));
    spawn("spmv", [pb, c] { cg_spmv(&pb->A, pb->st.p, pb->st.q, pb->ck.lo[c], pb->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) {
    deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, c));
    deps.push_back(chunk(WEFT_DEP_IN, st.q, ck, c));
    deps.push_back(weft::out(st.pq_part[c]));
    spawn("dot-pq", [pb, c] { pb->st.pq_part[c] = cg_dot(pb->st.p, pb->st.q, pb->ck.lo[c], pb->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) deps.push_back(weft::in(st.pq_part[c]));
  deps.push_back(weft::in(st.s->rr));
  deps.push_back(weft::out(st.s->alpha));
  spawn("alpha", [pb] { cg_alpha_step(pb->st.s, pb->st.pq_part, pb->ck.T); });
  for (int c = 0; c < T; ++c) {
    deps.push_back(weft::in(st.s->alpha));
    deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, c));
    deps.push_back(chunk(WEFT_DEP_INOUT, st.x, ck, c));
    spawn("axpy-x", [pb, c] { cg_axpy(pb->st.x, pb->st.s->alpha, pb->st.p, pb->ck.lo[c], pb->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) {
    deps.push_back(weft::in(st.s->alpha));
    deps.push_back(chunk(WEFT_DEP_IN, st.q, ck, c));
    deps.push_back(chunk(WEFT_DEP_INOUT, st.r, ck, c));
    spawn("axpy-r", [pb, c] { cg_axpy(pb->st.r, -pb->st.s->alpha, pb->st.q, pb->ck.lo[c], pb->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) {
    deps.push_back(chunk(WEFT_DEP_IN, st.r, ck, c));
    deps.push_back(weft::out(st.rr_part[c]));
    spawn("dot-rr", [pb, c] { pb->st.rr_part[c] = cg_dot(pb->st.r, pb->st.r, pb->ck.lo[c], pb->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) deps.push_back(weft::in(st.rr_part[c]));
  deps.push_back(weft::inout(st.s->rr));
  deps.push_back(weft::out(st.s->beta));
  spawn("beta", [pb] { cg_beta_step(pb->st.s, pb->st.rr_part, pb->ck.T); });
  for (int c = 0; c < T; ++c) {
    deps.push_back(weft::in(st.s->beta));
    deps.push_back(chunk(WEFT_DEP_IN, st.r, ck, c));
    deps.push_back(chunk(WEFT_DEP_INOUT, st.p, ck, c));
    spawn("xpby", [pb, c] { cg_xpby(pb->st.p, pb->st.r, pb->st.s->beta, pb->ck.lo[c], pb->ck.lo[c + 1]); });
  }
}

void solve(cg_problem* pb, long iters, int variant) {
  switch (variant) {
    case V_WEFT:
      for (long it = 0; it < iters; ++it) submit_iteration(pb);
      check(weft_taskwait(), "weft_taskwait");
      break;
    case V_PERSISTENT: {
      weft::graph g;  // re-execute mode, the defaults
      for (long it = 0; it < iters; ++it) g.iteration([pb] { submit_iteration(pb); });
      g.end();
      break;
    }
    case V_TASKITER: {
      weft_graph_options_t opt;
      std::memset(&opt, 0, sizeof opt);
      opt.mode = WEFT_GRAPH_TASKITER;
      opt.iterations = iters;
      weft::graph g(opt);
      g.iteration([pb] { submit_iteration(pb); });
      g.end();
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  cg_options o;
  cg_parse(&o, argc, argv, "cg_weft", variants);
  if (o.threads > 0) {
    char value[16];
    std::snprintf(value, sizeof value, "%d", o.threads);
    setenv("WEFT_NUM_THREADS", value, 1);
  }
  check(weft_init(), "weft_init");
  cg_problem pb;
  cg_setup(&pb, &o, "cg_weft");
  deps.reserve(static_cast<std::size_t>(o.T) + 8);
  weft_reset_stats();

  double t0 = app_now();
  try {
    solve(&pb, o.iters, o.variant_index);
  } catch (const weft::error& e) {
    app_die("cg_weft: %s", e.what());
  }
  double seconds = app_now() - t0;
  weft_stats_t stats;
  weft_get_stats(&stats);

  double error = 0.0;
  int ok = cg_check(&pb, &o, &error, "cg_weft");

  app_result res;
  std::memset(&res, 0, sizeof res);
  res.app = "cg";
  res.variant = o.variant;
  res.runtime = "weft";
  res.threads = weft_num_workers();
  res.size = pb.A.rows;
  res.block = o.T;
  res.iters = o.iters;
  res.seconds = seconds;
  res.gflops = cg_gflops(&pb.A, o.iters, seconds);
  res.tasks = cg_task_count(&o);
  res.edges = static_cast<long long>(stats.edges_created);
  res.ok = ok;
  res.error = error;
  app_print_result(&res);
  cg_state_free(&pb.st);
  cg_chunks_free(&pb.ck);
  cg_matrix_free(&pb.A);
  std::free(pb.b);
  check(weft_finalize(), "weft_finalize");
  return ok ? 0 : 1;
}
