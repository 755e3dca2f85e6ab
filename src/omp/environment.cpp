// OMP_* environment variables, read once when the library loads (as libgomp does, so that a
// program's first omp_get_max_threads() already sees them), and OMP_DISPLAY_ENV.
#include <sched.h>
#include <strings.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "omp/omp_internal.hpp"
#include "sched/cpu_topology.hpp"

namespace weft::omp {

settings the_settings;

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

void invalid(const char* name) {
  std::fprintf(stderr, "weft: invalid value for environment variable %s (ignored)\n", name);
}

const char* skip_space(const char* p) {
  while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
  return p;
}

bool word_is(const char*& p, const char* word) {
  std::size_t n = std::strlen(word);
  if (strncasecmp(p, word, n) != 0) return false;
  char c = p[n];
  if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') return false;
  p += n;
  return true;
}

bool parse_long(const char*& p, long& out) {
  p = skip_space(p);
  char* end;
  errno = 0;
  long v = std::strtol(p, &end, 10);
  if (end == p || errno) return false;
  out = v;
  p = skip_space(end);
  return true;
}

// A non-negative (or positive) integer, whole value.
bool parse_int_var(const char* name, int& out, long min, long max) {
  const char* text = env(name);
  if (!text) return false;
  const char* p = text;
  long v;
  if (!parse_long(p, v) || *p || v < min || v > max) {
    invalid(name);
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

bool parse_bool_var(const char* name, bool& out) {
  const char* text = env(name);
  if (!text) return false;
  const char* p = skip_space(text);
  bool v;
  if (word_is(p, "true"))
    v = true;
  else if (word_is(p, "false"))
    v = false;
  else {
    invalid(name);
    return false;
  }
  if (*skip_space(p)) {
    invalid(name);
    return false;
  }
  out = v;
  return true;
}

int cpus_in_mask() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

void parse_num_threads(settings& s) {
  const char* text = env("OMP_NUM_THREADS");
  if (!text) return;
  std::vector<int> list;
  const char* p = text;
  for (;;) {
    long v;
    if (!parse_long(p, v) || v < 1 || v > (1 << 20)) {
      invalid("OMP_NUM_THREADS");
      return;
    }
    list.push_back(static_cast<int>(v));
    if (!*p) break;
    if (*p != ',') {
      invalid("OMP_NUM_THREADS");
      return;
    }
    ++p;
  }
  s.nthreads_list = list;
  s.initial.nthreads = list[0];
}

// WEFT_NUM_THREADS, when set, wins over OMP_NUM_THREADS (the README's rule for every WEFT_*
// variable and its OMP_* counterpart): it is the first level's team size as well as the pool's.
// Its validity is the engine's to report (weft_init names a bad value).
void apply_weft_num_threads(settings& s) {
  const char* text = env("WEFT_NUM_THREADS");
  if (!text) return;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end || v < 1 || v > 4096) return;
  s.initial.nthreads = static_cast<int>(v);
  if (!s.nthreads_list.empty()) s.nthreads_list[0] = static_cast<int>(v);
}

void parse_schedule(settings& s) {
  const char* text = env("OMP_SCHEDULE");
  if (!text) return;
  const char* p = skip_space(text);
  unsigned modifier = 0;
  bool explicit_modifier = false;
  if (word_is(p, "monotonic")) {
    modifier = sched_monotonic;
    explicit_modifier = true;
  } else if (word_is(p, "nonmonotonic")) {
    explicit_modifier = true;
  }
  if (explicit_modifier) {
    p = skip_space(p);
    if (*p != ':') return invalid("OMP_SCHEDULE");
    p = skip_space(p + 1);
  }
  int kind;
  if (word_is(p, "static"))
    kind = sched_static;
  else if (word_is(p, "dynamic"))
    kind = sched_dynamic;
  else if (word_is(p, "guided"))
    kind = sched_guided;
  else if (word_is(p, "auto"))
    kind = sched_auto;
  else
    return invalid("OMP_SCHEDULE");
  long chunk = 0;
  p = skip_space(p);
  if (*p == ',') {
    ++p;
    if (!parse_long(p, chunk) || chunk < 0) return invalid("OMP_SCHEDULE");
  }
  if (*p) return invalid("OMP_SCHEDULE");
  if (kind == sched_static && !explicit_modifier) modifier = sched_monotonic;
  if (kind != sched_static && chunk == 0) chunk = 1;
  s.initial.run_sched = kind | static_cast<int>(modifier);
  s.initial.run_chunk = static_cast<int>(chunk);
}

// omp_proc_bind_t: false 0, true 1, primary 2, close 3, spread 4.
void parse_proc_bind(settings& s) {
  const char* text = env("OMP_PROC_BIND");
  if (!text) return;
  const char* p = skip_space(text);
  std::vector<int> list;
  if (word_is(p, "false"))
    list.push_back(0);
  else if (word_is(p, "true"))
    list.push_back(1);
  else {
    for (;;) {
      p = skip_space(p);
      if (word_is(p, "primary") || word_is(p, "master"))
        list.push_back(2);
      else if (word_is(p, "close"))
        list.push_back(3);
      else if (word_is(p, "spread"))
        list.push_back(4);
      else
        return invalid("OMP_PROC_BIND");
      p = skip_space(p);
      if (!*p) break;
      if (*p != ',') return invalid("OMP_PROC_BIND");
      ++p;
    }
  }
  if (*skip_space(p)) return invalid("OMP_PROC_BIND");
  s.bind_list = list;
}

// OMP_PLACES: an abstract name (threads, cores, sockets, ll_caches, numa_domains, with an optional
// count), or an explicit list of {…} places. Parsed to count places and report them; the engine's
// own binding (WEFT_BIND) places the workers.
void parse_places(settings& s) {
  const char* text = env("OMP_PLACES");
  if (!text) return;
  const char* p = skip_space(text);
  static const char* const names[] = {"threads", "cores", "sockets", "ll_caches", "numa_domains"};
  for (const char* name : names) {
    const char* q = p;
    if (word_is(q, name)) {
      q = skip_space(q);
      long count = -1;
      if (*q == '(') {
        ++q;
        if (!parse_long(q, count) || count < 1 || *q != ')') return invalid("OMP_PLACES");
        q = skip_space(q + 1);
      }
      if (*q) return invalid("OMP_PLACES");
      // The CPUs of the thread's mask: a place per CPU (threads), per core (its PUs in the mask),
      // or one of them all (sockets, caches, NUMA domains: not told apart here).
      s.places.clear();
      sched::cpu_mask mask;
      if (!sched::cpu_mask::of_calling_thread(mask)) {
        const int cpus = cpus_in_mask();
        for (int c = 0; c < cpus; ++c) mask.set(static_cast<std::size_t>(c));
      }
      auto ids_of = [](const sched::cpu_mask& m) {
        std::vector<int> ids;
        for (std::size_t c = 0; c < m.size_bits(); ++c)
          if (m.test(c)) ids.push_back(static_cast<int>(c));
        return ids;
      };
      if (std::strcmp(name, "threads") == 0) {
        for (int id : ids_of(mask)) s.places.push_back({id});
      } else if (std::strcmp(name, "cores") == 0) {
        for (const sched::cpu_mask& core : sched::cores_of(mask)) s.places.push_back(ids_of(core));
      } else {
        s.places.push_back(ids_of(mask));
      }
      if (count > 0 && static_cast<std::size_t>(count) < s.places.size())
        s.places.resize(static_cast<std::size_t>(count));
      s.num_places = static_cast<int>(s.places.size());
      return;
    }
  }
  // Explicit list: {a,b:len:stride,...}[:count[:stride]], ...
  std::vector<std::vector<int>> places;
  for (;;) {
    p = skip_space(p);
    bool exclude = false;
    if (*p == '!') {
      exclude = true;
      ++p;
    }
    if (*p != '{') return invalid("OMP_PLACES");
    ++p;
    std::vector<int> ids;
    for (;;) {
      p = skip_space(p);
      bool ex = false;
      if (*p == '!') {
        ex = true;
        ++p;
      }
      long first, len = 1, stride = 1;
      if (!parse_long(p, first) || first < 0) return invalid("OMP_PLACES");
      if (*p == ':') {
        ++p;
        if (!parse_long(p, len) || len < 1) return invalid("OMP_PLACES");
        if (*p == ':') {
          ++p;
          if (!parse_long(p, stride)) return invalid("OMP_PLACES");
        }
      }
      for (long i = 0; i < len; ++i) {
        int id = static_cast<int>(first + i * stride);
        if (ex) {
          for (auto it = ids.begin(); it != ids.end(); ++it)
            if (*it == id) {
              ids.erase(it);
              break;
            }
        } else {
          ids.push_back(id);
        }
      }
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p == '}') {
        ++p;
        break;
      }
      return invalid("OMP_PLACES");
    }
    long count = 1, stride = 1;
    p = skip_space(p);
    if (*p == ':') {
      ++p;
      if (!parse_long(p, count) || count < 1) return invalid("OMP_PLACES");
      stride = static_cast<long>(ids.size());
      if (*p == ':') {
        ++p;
        if (!parse_long(p, stride)) return invalid("OMP_PLACES");
      }
    }
    for (long c = 0; c < count; ++c) {
      std::vector<int> place;
      for (int id : ids) place.push_back(static_cast<int>(id + c * stride));
      if (exclude) {
        for (auto it = places.begin(); it != places.end(); ++it)
          if (*it == place) {
            places.erase(it);
            break;
          }
      } else {
        places.push_back(place);
      }
    }
    p = skip_space(p);
    if (!*p) break;
    if (*p != ',') return invalid("OMP_PLACES");
    ++p;
  }
  if (places.size() > 65536) return invalid("OMP_PLACES");
  // Only the CPUs this process may run on count, as in libgomp: a place keeps those, and a place
  // with none is dropped (an OMP_PLACES written for a larger machine).
  sched::cpu_mask usable;
  if (sched::cpu_mask::of_calling_thread(usable)) {
    std::size_t given = places.size();
    std::vector<std::vector<int>> kept;
    for (auto& place : places) {
      std::vector<int> ids;
      for (int id : place)
        if (id >= 0 && static_cast<std::size_t>(id) < usable.size_bits() && usable.test(static_cast<std::size_t>(id)))
          ids.push_back(id);
      if (!ids.empty()) kept.push_back(std::move(ids));
    }
    if (kept.size() < given)
      std::fprintf(stderr,
                   "weft: OMP_PLACES: %zu of its %zu places kept; the others have no CPU this process may run on\n",
                   kept.size(), given);
    places = std::move(kept);
  }
  s.places = places;
  s.num_places = static_cast<int>(places.size());
}

void parse_stacksize(settings& s) {
  const char* text = env("OMP_STACKSIZE");
  const char* name = "OMP_STACKSIZE";
  if (!text) {
    text = env("GOMP_STACKSIZE");
    name = "GOMP_STACKSIZE";
  }
  if (!text) return;
  const char* p = text;
  long v;
  if (!parse_long(p, v) || v < 0) return invalid(name);
  std::size_t unit = 1024;
  switch (std::tolower(static_cast<unsigned char>(*p))) {
    case 'b':
      unit = 1;
      ++p;
      break;
    case 'k':
      unit = 1024;
      ++p;
      break;
    case 'm':
      unit = 1024 * 1024;
      ++p;
      break;
    case 'g':
      unit = std::size_t{1} << 30;
      ++p;
      break;
    case 0:
      break;
    default:
      return invalid(name);
  }
  if (*skip_space(p)) return invalid(name);
  s.stacksize = static_cast<std::size_t>(v) * unit;
}

// Predefined allocators by handle (gcc's omp.h numbering, from 1), and memory spaces (from 0).
const char* const allocator_names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc", "omp_const_mem_alloc",
                                       "omp_high_bw_mem_alloc", "omp_low_lat_mem_alloc",   "omp_cgroup_mem_alloc",
                                       "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
const char* const memspace_names[] = {"omp_default_mem_space", "omp_large_cap_mem_space", "omp_const_mem_space",
                                      "omp_high_bw_mem_space", "omp_low_lat_mem_space"};

// The traits OMP_ALLOCATOR may give (omp_alloctrait_key_t, and omp_alloctrait_value_t per word);
// a trait without words takes a positive integer.
struct trait_word {
  const char* word;
  std::uintptr_t value;
};
struct trait_syntax {
  const char* name;
  int key;
  std::vector<trait_word> words;
};

// OMP_ALLOCATOR: a predefined allocator's name, or (OpenMP 5.1) a memory space's name alone (its
// predefined allocator) or followed by ':' and trait=value pairs separated by commas, which make a
// new allocator. Names and words in any case, as libgomp reads them.
void parse_allocator(settings& s) {
  const char* text = env("OMP_ALLOCATOR");
  if (!text) return;
  const char* p = skip_space(text);
  for (std::uintptr_t a = 0; a < std::size(allocator_names); ++a)
    if (word_is(p, allocator_names[a])) {
      if (*skip_space(p)) return invalid("OMP_ALLOCATOR");
      s.initial.def_allocator = a + 1;
      return;
    }
  std::uintptr_t space = 0;
  while (space < std::size(memspace_names) && !word_is(p, memspace_names[space])) ++space;
  if (space == std::size(memspace_names)) return invalid("OMP_ALLOCATOR");
  p = skip_space(p);
  if (!*p) {
    s.initial.def_allocator = space + 1;  // omp_<space>_mem_alloc has the same position
    return;
  }
  if (*p != ':') return invalid("OMP_ALLOCATOR");
  static const trait_syntax syntax[] = {
      {"sync_hint", 1, {{"contended", 3}, {"uncontended", 4}, {"serialized", 5}, {"private", 6}}},
      {"alignment", 2, {}},
      {"access", 3, {{"all", 7}, {"cgroup", 10}, {"pteam", 9}, {"thread", 8}}},
      {"pool_size", 4, {}},
      {"fallback", 5, {{"default_mem_fb", 11}, {"null_fb", 12}, {"abort_fb", 13}, {"allocator_fb", 14}}},
      {"pinned", 7, {{"true", 1}, {"false", 0}}},
      {"partition", 8, {{"environment", 15}, {"nearest", 16}, {"blocked", 17}, {"interleaved", 18}}},
  };
  std::vector<alloc_trait> traits;
  do {
    p = skip_space(p + 1);
    const trait_syntax* t = nullptr;
    for (const trait_syntax& candidate : syntax)
      if (word_is(p, candidate.name)) t = &candidate;
    if (!t) return invalid("OMP_ALLOCATOR");
    p = skip_space(p);
    if (*p != '=') return invalid("OMP_ALLOCATOR");
    p = skip_space(p + 1);
    long number;
    const trait_word* w = nullptr;
    for (const trait_word& candidate : t->words)
      if (word_is(p, candidate.word)) w = &candidate;
    if (w)
      traits.push_back({t->key, w->value});
    else if (t->words.empty() && parse_long(p, number) && number > 0)
      traits.push_back({t->key, static_cast<std::uintptr_t>(number)});
    else
      return invalid("OMP_ALLOCATOR");
    p = skip_space(p);
  } while (*p == ',');
  if (*p) return invalid("OMP_ALLOCATOR");
  std::string why;
  std::uintptr_t a = make_allocator(space, static_cast<int>(traits.size()), traits.data(), why);
  if (!a) {
    std::fprintf(stderr, "weft: OMP_ALLOCATOR: %s; omp_default_mem_alloc is the default allocator\n", why.c_str());
    return;
  }
  s.initial.def_allocator = a;
  s.allocator_text = text;
}

}  // namespace

void read_environment() {
  settings& s = the_settings;
  s.initial.nthreads = cpus_in_mask();
  s.initial.nthreads_pos = 0;
  s.initial.bind_pos = 0;
  s.initial.dynamic = false;
  s.initial.max_active_levels = 1;
  s.initial.run_sched = sched_dynamic;
  s.initial.run_chunk = 1;
  s.initial.default_device = 0;
  s.initial.thread_limit = unlimited_threads;
  s.initial.def_allocator = 1;  // omp_default_mem_alloc
  s.initial.gang = 0;
  parse_num_threads(s);
  apply_weft_num_threads(s);
  parse_schedule(s);
  parse_proc_bind(s);
  parse_places(s);
  if (s.bind_list.size() == 1 && s.bind_list[0] == 0 && s.num_places > 0) {
    // OMP_PROC_BIND=false: no thread is bound to a place, and libgomp then keeps no place list
    // (omp_get_num_places 0, omp_get_place_num -1).
    s.places.clear();
    s.num_places = 0;
  }
  if (s.bind_list.empty() && s.num_places > 0) s.bind_list.push_back(1);  // places given: bind-var true (libgomp)
  if (!sched::cpu_mask::of_calling_thread(s.process_mask)) s.process_mask = sched::cpu_mask{};
  if (s.num_places == 0 && !s.bind_list.empty() && s.bind_list[0] != 0) {
    // OMP_PROC_BIND without OMP_PLACES: a place per hardware thread the process may run on, as
    // libgomp has (OMP_PLACES=threads).
    for (std::size_t id = 0; id < s.process_mask.size_bits(); ++id)
      if (s.process_mask.test(id)) s.places.push_back({static_cast<int>(id)});
    s.num_places = static_cast<int>(s.places.size());
  }
  s.initial.bind = static_cast<std::int8_t>(s.bind_list.empty() ? 0 : s.bind_list[0]);
  parse_stacksize(s);
  parse_allocator(s);
  bool b;
  if (parse_bool_var("OMP_DYNAMIC", b)) s.initial.dynamic = b;
  bool levels_set = false;
  int v;
  if (parse_int_var("OMP_MAX_ACTIVE_LEVELS", v, 0, 255)) {
    s.initial.max_active_levels = v;
    levels_set = true;
  } else if (parse_bool_var("OMP_NESTED", b)) {
    s.initial.max_active_levels = b ? 255 : 1;
    levels_set = true;
  }
  // A list of team sizes or bindings asks for nesting (OpenMP 5.0 semantics).
  if (!levels_set && (s.nthreads_list.size() > 1 || s.bind_list.size() > 1)) s.initial.max_active_levels = 255;
  if (parse_int_var("OMP_THREAD_LIMIT", v, 1, unlimited_threads)) s.initial.thread_limit = v;
  if (parse_int_var("OMP_MAX_TASK_PRIORITY", v, 0, 1 << 30)) s.max_task_priority = v;
  if (parse_bool_var("OMP_CANCELLATION", b)) s.cancellation = b;
  if (parse_int_var("OMP_DEFAULT_DEVICE", v, 0, 1 << 30)) s.initial.default_device = v;
  if (parse_int_var("OMP_NUM_TEAMS", v, 1, 1 << 30)) s.num_teams = v;
  if (parse_int_var("OMP_TEAMS_THREAD_LIMIT", v, 1, 1 << 30)) s.teams_thread_limit = v;
  if (parse_bool_var("OMP_DISPLAY_AFFINITY", b)) s.display_affinity = b;
  // Taken as it is, even empty (libgomp's default otherwise).
  const char* format = std::getenv("OMP_AFFINITY_FORMAT");
  s.affinity_format = format ? format : "level %L thread %i affinity %A";
  if (const char* text = env("OMP_WAIT_POLICY")) {
    const char* p = skip_space(text);
    if (word_is(p, "active"))
      s.wait_policy = 1;
    else if (word_is(p, "passive"))
      s.wait_policy = 0;
    else
      invalid("OMP_WAIT_POLICY");
  }
  if (const char* text = env("OMP_DISPLAY_ENV")) {
    const char* p = skip_space(text);
    if (word_is(p, "true"))
      s.display_env = 1;
    else if (word_is(p, "verbose"))
      s.display_env = 2;
    else if (!word_is(p, "false"))
      invalid("OMP_DISPLAY_ENV");
  }
}

void display_environment(bool verbose) {
  const settings& s = the_settings;
  static const char* const bind_names[] = {"FALSE", "TRUE", "PRIMARY", "CLOSE", "SPREAD"};
  static const char* const sched_names[] = {"?", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
  std::string out = "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '201511'\n  OMP_DYNAMIC = '";
  out += s.initial.dynamic ? "TRUE" : "FALSE";
  // The lines, order and values libgomp prints, so that scripts reading them see the same.
  out += "'\n  OMP_NESTED = '";
  out += s.initial.max_active_levels > 1 ? "TRUE" : "FALSE";
  out += "'\n  OMP_NUM_THREADS = '";
  if (s.nthreads_list.empty()) {
    out += std::to_string(s.initial.nthreads);
  } else {
    for (std::size_t i = 0; i < s.nthreads_list.size(); ++i) out += (i ? "," : "") + std::to_string(s.nthreads_list[i]);
  }
  int kind = s.initial.run_sched & 0x7fffffff;
  out += "'\n  OMP_SCHEDULE = '";
  out += (s.initial.run_sched & static_cast<int>(sched_monotonic)) && kind != sched_static ? "MONOTONIC:" : "";
  out += sched_names[kind >= 1 && kind <= 4 ? kind : 0];
  // The chunk when it is not the kind's default (static: 0, the others: 1), as libgomp shows it.
  if (s.initial.run_chunk != (kind == sched_static ? 0 : 1)) out += "," + std::to_string(s.initial.run_chunk);
  out += "'\n  OMP_PROC_BIND = '";
  if (s.bind_list.empty()) {
    out += "FALSE";
  } else {
    for (std::size_t i = 0; i < s.bind_list.size(); ++i) out += std::string(i ? "," : "") + bind_names[s.bind_list[i]];
  }
  // The places as processor lists, runs of consecutive ids as start:length: {0:4},{4:4}.
  out += "'\n  OMP_PLACES = '";
  for (std::size_t i = 0; i < s.places.size(); ++i) {
    const std::vector<int>& ids = s.places[i];
    out += i ? ",{" : "{";
    for (std::size_t a = 0; a < ids.size();) {
      std::size_t b = a + 1;
      while (b < ids.size() && ids[b] == ids[b - 1] + 1) ++b;
      out += (a ? "," : "") + std::to_string(ids[a]) + (b - a > 1 ? ":" + std::to_string(b - a) : "");
      a = b;
    }
    out += "}";
  }
  out += "'\n";
  out += "  OMP_STACKSIZE = '" + std::to_string(s.stacksize) + "'\n";
  out += std::string("  OMP_WAIT_POLICY = '") + (s.wait_policy == 1 ? "ACTIVE" : "PASSIVE") + "'\n";
  // No limit: libgomp's own value for it (UINT_MAX).
  out += "  OMP_THREAD_LIMIT = '" +
         (s.initial.thread_limit >= unlimited_threads ? std::string("4294967295")
                                                      : std::to_string(s.initial.thread_limit)) +
         "'\n";
  out += "  OMP_MAX_ACTIVE_LEVELS = '" + std::to_string(s.initial.max_active_levels) + "'\n";
  out += "  OMP_NUM_TEAMS = '" + std::to_string(s.num_teams) + "'\n";
  out += "  OMP_TEAMS_THREAD_LIMIT = '" + std::to_string(s.teams_thread_limit) + "'\n";
  out += std::string("  OMP_CANCELLATION = '") + (s.cancellation ? "TRUE" : "FALSE") + "'\n";
  out += "  OMP_DEFAULT_DEVICE = '" + std::to_string(s.initial.default_device) + "'\n";
  out += "  OMP_MAX_TASK_PRIORITY = '" + std::to_string(s.max_task_priority) + "'\n";
  out += std::string("  OMP_DISPLAY_AFFINITY = '") + (s.display_affinity ? "TRUE" : "FALSE") + "'\n";
  out += "  OMP_AFFINITY_FORMAT = '" + current_affinity_format() + "'\n";
  std::uintptr_t a = s.initial.def_allocator;
  out += "  OMP_ALLOCATOR = '" + (a > std::size(allocator_names) ? s.allocator_text : allocator_names[a - 1]) + "'\n";
  const char* offload = env("OMP_TARGET_OFFLOAD");
  out += std::string("  OMP_TARGET_OFFLOAD = '") +
         (offload && strcasecmp(offload, "mandatory") == 0  ? "MANDATORY"
          : offload && strcasecmp(offload, "disabled") == 0 ? "DISABLED"
                                                            : "DEFAULT") +
         "'\n";
  if (verbose) {
    out +=
        "  weft: the OpenMP door maps parallel regions onto gangs of weft workers; WEFT_* variables\n"
        "  tune the engine (WEFT_DISPLAY_ENV=1 lists them)\n";
  }
  out += "OPENMP DISPLAY ENVIRONMENT END\n";
  out += "weft: runtime in use: weft " + std::to_string(WEFT_VERSION_MAJOR) + "." + std::to_string(WEFT_VERSION_MINOR) +
         " (OpenMP door), not libgomp\n";
  std::fputs(out.c_str(), stderr);
}

// With binding on and places known, the initial thread runs on the first place from the start,
// as libgomp's does: omp_get_place_num() is 0 in the sequential part, before any region. The
// engine then binds it to its first core when it starts (the same CPUs when places are threads or
// cores). WEFT_BIND=none wins, as it does for the workers.
void bind_initial_thread() {
  const settings& s = config();
  const char* weft_bind = std::getenv("WEFT_BIND");
  if (s.initial.bind == 0 || s.num_places == 0 || (weft_bind && std::strcmp(weft_bind, "none") == 0)) return;
  sched::cpu_mask first;
  for (int id : s.places[0]) first.set(static_cast<std::size_t>(id));
  if (!sched::bind_calling_thread(first))
    std::fprintf(stderr, "weft: the initial thread cannot be bound to its place {%s} (sched_setaffinity)\n",
                 first.describe().c_str());
}

// Parsed at load, like libgomp, so the first query already sees the environment. A dynamic
// initialiser of this file, after the_settings's: a constructor elsewhere may run before this
// file's initialisers (the link order decides), which then reset what it had read.
namespace {
struct load_door {
  load_door() {
    read_environment();
    bind_initial_thread();
    if (config().display_env) display_environment(config().display_env == 2);
  }
} const door_loaded;
}  // namespace

}  // namespace weft::omp
