// Random distributed taskiter loops against a sequential run of the same loop.
//
//   mpirun -np R dist_random_loops [loops] [seed]
//
// Each loop: random regions with random homes in the symmetric heap, a round of 1-3 iterations of
// random tasks (in/out/inout on 0-3 regions, some placed on a random rank, the others by owner
// computes), 1-9 iterations in all. Each rank initialises only the regions it is home of (the other
// copies stay zero, so a missing fetch shows), runs the loop, and checks the regions it is home of
// against the sequential loop computed on private memory. Exit 0 when every rank agrees.
#include <mpi.h>
#include <weft/dist.h>
#include <weft/mpi.h>
#include <weft/weft.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <vector>

namespace {

constexpr int words = 8;  // per region

struct access_spec {
  int region;
  weft_dep_type type;
};
struct task_spec {
  int iteration;
  int rank;  // -1: owner computes
  std::vector<access_spec> accesses;
};
struct loop_spec {
  int unroll;
  long iterations;
  std::vector<int> homes;
  std::vector<task_spec> tasks;
};

loop_spec make_loop(std::uint64_t seed, int ranks) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  loop_spec l;
  l.unroll = pick(1, 3);
  l.iterations = pick(1, 9);
  const int nregions = pick(1, 12);
  for (int i = 0; i < nregions; ++i) l.homes.push_back(pick(0, ranks - 1));
  const int per_iteration = pick(1, 16);
  for (int it = 0; it < l.unroll; ++it)
    for (int k = 0; k < per_iteration; ++k) {
      task_spec t{it, pick(0, 2) == 0 ? pick(0, ranks - 1) : -1, {}};
      std::set<int> taken;
      for (int a = pick(0, 3); a > 0; --a) {
        int g = pick(0, nregions - 1);
        if (!taken.insert(g).second) continue;
        static const weft_dep_type kinds[] = {WEFT_DEP_IN, WEFT_DEP_OUT, WEFT_DEP_INOUT};
        t.accesses.push_back({g, kinds[pick(0, 2)]});
      }
      l.tasks.push_back(t);
    }
  return l;
}

// The task body: every written region gets a function of what the task reads (all its regions
// but the out-only ones) and of its own number.
struct body_args {
  std::uint64_t id;
  int count;
  std::uint64_t* regions[3];
  int types[3];
};

void body(void* p) {
  const auto& a = *static_cast<const body_args*>(p);
  std::uint64_t seen = a.id * 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < a.count; ++i)
    if (a.types[i] != WEFT_DEP_OUT)
      for (int w = 0; w < words; ++w)
        seen = (seen ^ a.regions[i][w]) * 0x100000001b3ull + static_cast<std::uint64_t>(w);
  for (int i = 0; i < a.count; ++i)
    if (a.types[i] != WEFT_DEP_IN)
      for (int w = 0; w < words; ++w)  // an out access never reads what it overwrites
        a.regions[i][w] =
            seen + static_cast<std::uint64_t>(w) * 31 + (a.types[i] == WEFT_DEP_OUT ? 0 : a.regions[i][w] * 3);
}

body_args args_of(const task_spec& t, std::uint64_t id, std::uint64_t* base) {
  body_args a{};
  a.id = id;
  a.count = static_cast<int>(t.accesses.size());
  for (int i = 0; i < a.count; ++i) {
    a.regions[i] = base + static_cast<std::size_t>(t.accesses[static_cast<std::size_t>(i)].region) * words;
    a.types[i] = t.accesses[static_cast<std::size_t>(i)].type;
  }
  return a;
}

void initial_values(std::uint64_t* base, std::size_t nregions, std::uint64_t seed, const std::vector<int>* homes,
                    int rank) {
  for (std::size_t g = 0; g < nregions; ++g) {
    if (homes && (*homes)[g] != rank) continue;
    for (int w = 0; w < words; ++w)
      base[g * words + static_cast<std::size_t>(w)] = seed * 1000 + g * 17 + static_cast<std::uint64_t>(w);
  }
}

int run_one(std::uint64_t seed, int rank, int ranks) {
  loop_spec l = make_loop(seed, ranks);
  const std::size_t nregions = l.homes.size();
  // The sequential loop.
  std::vector<std::uint64_t> reference(nregions * words);
  initial_values(reference.data(), nregions, seed, nullptr, rank);
  for (long it = 0; it < l.iterations; ++it)
    for (std::size_t k = 0; k < l.tasks.size(); ++k)
      if (l.tasks[k].iteration == it % l.unroll) {
        body_args a = args_of(l.tasks[k], k, reference.data());
        body(&a);
      }
  // The distributed loop.
  auto* data = static_cast<std::uint64_t*>(weft_dist_alloc(nregions * words * sizeof(std::uint64_t)));
  if (!data) return 1;
  for (std::size_t g = 0; g < nregions; ++g)
    if (weft_dist_region(data + g * words, words * sizeof(std::uint64_t), l.homes[g]) != WEFT_OK) return 1;
  initial_values(data, nregions, seed, &l.homes, rank);
  weft_graph_options_t o{};
  o.mode = WEFT_GRAPH_DISTRIBUTED;
  o.unroll = l.unroll;
  o.iterations = l.iterations;
  o.policy = static_cast<int>(seed % 3);  // default, immediate successor, iteration priority
  if (weft_graph_begin_with(&o) != WEFT_OK) return 1;
  int iteration = -1;
  for (std::size_t k = 0; k < l.tasks.size(); ++k) {
    const task_spec& t = l.tasks[k];
    while (iteration < t.iteration) {
      weft_graph_iteration();
      ++iteration;
    }
    body_args a = args_of(t, k, data);
    weft_task_t* task = weft_task_create(body, &a, sizeof a, WEFT_TASK_DEFAULT);
    for (const access_spec& s : t.accesses)
      weft_task_depend(task, s.type, data + static_cast<std::size_t>(s.region) * words, words * sizeof(std::uint64_t));
    if (t.rank >= 0) weft_dist_task_rank(task, t.rank);
    weft_task_submit(task);
  }
  while (iteration < l.unroll - 1) {
    weft_graph_iteration();
    ++iteration;
  }
  int status = weft_graph_end();
  int bad = status != WEFT_OK;
  if (bad)
    std::fprintf(stderr, "rank %d: seed %llu: weft_graph_end returned %d\n", rank, (unsigned long long)seed, status);
  for (std::size_t g = 0; g < nregions && !bad; ++g) {
    if (l.homes[g] != rank) continue;
    if (std::memcmp(data + g * words, reference.data() + g * words, words * sizeof(std::uint64_t)) != 0) {
      std::fprintf(stderr,
                   "rank %d: seed %llu: region %zu (home %d) differs from the sequential loop (%zu tasks, unroll %d, "
                   "%ld iterations)\n",
                   rank, (unsigned long long)seed, g, l.homes[g], l.tasks.size(), l.unroll, l.iterations);
      bad = 1;
    }
  }
  weft_dist_free(data);
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int loops = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::uint64_t first = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  int failed = 0;
  for (int i = 0; i < loops; ++i) {
    int bad = run_one(first + static_cast<std::uint64_t>(i), rank, ranks);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      failed = 1;
      if (rank == 0)
        std::fprintf(stderr, "loop %d (seed %llu) failed\n", i,
                     (unsigned long long)(first + static_cast<std::uint64_t>(i)));
      break;
    }
  }
  if (rank == 0 && !failed)
    std::printf("%d random distributed loops on %d rank(s) match the sequential loop\n", loops, ranks);
  MPI_Finalize();
  return failed;
}
