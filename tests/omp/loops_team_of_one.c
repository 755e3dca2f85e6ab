/* A team of one takes a worksharing loop's whole range in one chunk, whatever the schedule (weft
 * only: libgomp does so for static schedules alone), while sections still hand out one section
 * per call and a team of several still gets chunks of the size asked. Driven through gcc's
 * GOMP_loop_* and GOMP_sections_* entry points, so that the chunks themselves are visible. */
#include "omp_test.h"

#include <stdbool.h>

bool GOMP_loop_dynamic_start(long, long, long, long, long*, long*);
bool GOMP_loop_dynamic_next(long*, long*);
bool GOMP_loop_guided_start(long, long, long, long, long*, long*);
bool GOMP_loop_guided_next(long*, long*);
bool GOMP_loop_static_start(long, long, long, long, long*, long*);
bool GOMP_loop_static_next(long*, long*);
bool GOMP_loop_ordered_static_start(long, long, long, long, long*, long*);
bool GOMP_loop_ordered_static_next(long*, long*);
bool GOMP_loop_ordered_dynamic_start(long, long, long, long, long*, long*);
bool GOMP_loop_ordered_dynamic_next(long*, long*);
void GOMP_loop_end(void);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_start(unsigned);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);

typedef bool (*start_fn)(long, long, long, long, long*, long*);
typedef bool (*next_fn)(long*, long*);

static const struct {
  const char* name;
  start_fn start;
  next_fn next;
} kinds[] = {
    {"dynamic", GOMP_loop_dynamic_start, GOMP_loop_dynamic_next},
    {"guided", GOMP_loop_guided_start, GOMP_loop_guided_next},
    {"static,chunk", GOMP_loop_static_start, GOMP_loop_static_next},
    {"ordered static,chunk", GOMP_loop_ordered_static_start, GOMP_loop_ordered_static_next},
    {"ordered dynamic", GOMP_loop_ordered_dynamic_start, GOMP_loop_ordered_dynamic_next},
};

/* One loop from 3 to 1003 by 2 (500 iterations), chunk 7, on the calling member: the chunks it got
 * and the iterations they covered (out). */
static int one_loop(int k, long* covered, long* largest) {
  long s, e;
  int chunks = 0;
  *covered = 0;
  *largest = 0;
  for (bool more = kinds[k].start(3, 1003, 2, 7, &s, &e); more; more = kinds[k].next(&s, &e)) {
    CHECK(s >= 3 && e <= 1003 && s < e && (s - 3) % 2 == 0, "%s: chunk [%ld, %ld) out of the loop", kinds[k].name, s,
          e);
    long n = (e - s + 1) / 2;
    *covered += n;
    if (n > *largest) *largest = n;
    ++chunks;
  }
  GOMP_loop_end_nowait();
  return chunks;
}

int main(void) {
  PHASE("team of one");
#pragma omp parallel num_threads(1)
  for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    long covered, largest;
    int chunks = one_loop((int)k, &covered, &largest);
    CHECK(covered == 500, "%s: a team of one covered %ld iterations of 500", kinds[k].name, covered);
    CHECK(chunks == 1, "%s: a team of one took %d chunks, not the whole range in one", kinds[k].name, chunks);
  }

  PHASE("outside any region");
  for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    long covered, largest;
    int chunks = one_loop((int)k, &covered, &largest);
    CHECK(covered == 500 && chunks == 1, "%s, orphaned: %d chunks, %ld iterations", kinds[k].name, chunks, covered);
  }

  PHASE("sections in a team of one");
#pragma omp parallel num_threads(1)
  {
    unsigned seen = 0, calls = 0;
    for (unsigned s = GOMP_sections_start(3); s; s = GOMP_sections_next()) {
      CHECK(s == seen + 1, "section %u handed out after %u", s, seen);
      seen = s;
      ++calls;
    }
    GOMP_sections_end_nowait();
    CHECK(calls == 3, "a team of one got %u section numbers of 3", calls);
  }

  PHASE("team of several");
  int threads = omp_get_max_threads();
  if (threads > 1) {
    static long covered_by[64], largest_by[64];
#pragma omp parallel num_threads(threads > 64 ? 64 : threads)
    {
      int me = omp_get_thread_num();
      /* dynamic and ordered dynamic keep chunks of 7 in a team of several */
      one_loop(0, &covered_by[me], &largest_by[me]);
#pragma omp barrier
#pragma omp single
      {
        long total = 0;
        for (int t = 0; t < omp_get_num_threads(); ++t) {
          total += covered_by[t];
          CHECK(largest_by[t] <= 7, "dynamic,7 in a team of %d: member %d got a chunk of %ld", omp_get_num_threads(), t,
                largest_by[t]);
        }
        CHECK(total == 500, "dynamic,7 in a team of %d covered %ld iterations of 500", omp_get_num_threads(), total);
      }
    }
  }
  return 0;
}
