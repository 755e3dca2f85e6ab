// Writes a session to the trace file (docs/trace-format.md), naming task functions by their symbols.
//
// OpenMP outlined functions (main._omp_fn.0) are local symbols: dladdr, which sees only the dynamic
// symbol table, cannot name them. The writer reads the full symbol table (.symtab) of the object
// that holds the function, from its file, once per object.
#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trace/names.hpp"
#include "trace/session.hpp"

namespace weft::trace {

namespace {

using symbol = symbolizer::symbol;

// The function symbols of one ELF file, sorted by address (relative to the load base for PIE
// objects and shared libraries, absolute for fixed-address executables: the same as st_value).
std::vector<symbol> read_symbols(const std::string& path) {
  std::vector<symbol> out;
  std::vector<char> file;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    char chunk[1 << 16];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) file.insert(file.end(), chunk, chunk + n);
    std::fclose(f);
  }
  if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0 ||
      file[EI_CLASS] != ELFCLASS64)
    return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > file.size())
    return out;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), file.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  for (std::uint32_t wanted : {std::uint32_t{SHT_SYMTAB}, std::uint32_t{SHT_DYNSYM}}) {
    for (const Elf64_Shdr& s : sections) {
      if (s.sh_type != wanted || s.sh_link >= sections.size() || s.sh_entsize != sizeof(Elf64_Sym)) continue;
      const Elf64_Shdr& strings = sections[s.sh_link];
      if (s.sh_offset + s.sh_size > file.size() || strings.sh_offset + strings.sh_size > file.size()) continue;
      for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, file.data() + s.sh_offset + off, sizeof sym);
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_name >= strings.sh_size) continue;
        const char* name = file.data() + strings.sh_offset + sym.st_name;
        out.push_back(
            symbol{sym.st_value, sym.st_size, std::string(name, strnlen(name, strings.sh_size - sym.st_name))});
      }
    }
    if (!out.empty()) break;  // .symtab has everything .dynsym has
  }
  std::sort(out.begin(), out.end(), [](const symbol& a, const symbol& b) { return a.start < b.start; });
  return out;
}

struct loaded_object {
  std::uint64_t base = 0;
  std::string path;
  bool found = false;
};

// The object whose loaded segments hold addr.
loaded_object object_of(const void* addr) {
  struct search {
    std::uintptr_t addr;
    loaded_object result;
  } s{reinterpret_cast<std::uintptr_t>(addr), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* arg) {
        auto& s = *static_cast<search*>(arg);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
          if (s.addr >= lo && s.addr < lo + ph.p_memsz) {
            s.result.base = info->dlpi_addr;
            s.result.path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
            s.result.found = true;
            return 1;
          }
        }
        return 0;
      },
      &s);
  return s.result;
}

std::string demangled(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  std::string out = status == 0 && d ? std::string(d.get()) : name;
  // weft::spawn runs every closure through one template: the closure's type is the useful name.
  const std::string prefix = "void weft::detail::trampoline<";
  if (out.compare(0, prefix.size(), prefix) == 0) {
    std::size_t close = out.rfind(">(void*)");
    if (close != std::string::npos && close > prefix.size()) out = out.substr(prefix.size(), close - prefix.size());
  }
  return out;
}

template <class T>
void put(std::vector<char>& out, const T& v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

bool write_all(std::FILE* f, const void* data, std::size_t n) {
  return n == 0 || std::fwrite(data, 1, n, f) == n;
}

}  // namespace

std::string symbolizer::symbol_of(const void* fn) {
  loaded_object o = object_of(fn);
  if (o.found) {
    auto it = tables_.find(o.path);
    if (it == tables_.end()) it = tables_.emplace(o.path, read_symbols(o.path)).first;
    const std::vector<symbol>& table = it->second;
    std::uint64_t off = reinterpret_cast<std::uintptr_t>(fn) - o.base;
    for (std::uint64_t key : {off, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(fn))}) {
      auto pos = std::upper_bound(table.begin(), table.end(), key,
                                  [](std::uint64_t k, const symbol& s) { return k < s.start; });
      if (pos == table.begin()) continue;
      --pos;
      if (key < pos->start + std::max<std::uint64_t>(pos->size, 1)) return demangled(pos->name);
    }
  }
  Dl_info info;
  if (dladdr(fn, &info) && info.dli_sname) return demangled(info.dli_sname);
  return std::string();
}

std::string symbolizer::name_of(const void* fn) {
  std::string name = symbol_of(fn);
  if (!name.empty()) return name;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", fn);
  return hex;
}

std::atomic<int> process_rank{-1};
std::atomic<int> process_ranks{0};

std::string rank_path(const std::string& path) {
  int rank = process_rank.load(std::memory_order_relaxed);
  int ranks = process_ranks.load(std::memory_order_relaxed);
  if (rank < 0) return path;
  std::string r = std::to_string(rank);
  std::string out;
  bool placed = false;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'r') {
      out += r;
      placed = true;
      ++i;
    } else {
      out += path[i];
    }
  }
  // Several ranks and no %r: one file per rank rather than all ranks over one file.
  if (!placed && ranks > 1) out += "." + r;
  return out;
}

bool write_file_locked(const std::string& requested, const std::vector<const buffer*>& workers, std::uint64_t end_ns) {
  std::string path = rank_path(requested);
  buffer shared = foreign_events();
  std::vector<kind> kinds = snapshot_kinds();
  symbolizer names;

  std::uint64_t dropped = shared.dropped;
  for (const buffer* b : workers) dropped += b->dropped;

  std::vector<char> head;
  head.insert(head.end(), {'W', 'E', 'F', 'T', 'T', 'R', 'C', '\x01'});
  put(head, std::uint32_t{1});                                // version
  put(head, std::uint32_t{sizeof(event)});                    // event_size
  put(head, static_cast<std::uint32_t>(workers.size()));      // workers
  put(head, static_cast<std::uint32_t>(workers.size() + 1));  // buffers
  put(head, origin_ns);
  put(head, end_ns);
  put(head, dropped);
  put(head, static_cast<std::uint32_t>(kinds.size()));
  put(head, static_cast<std::uint32_t>(getpid()));
  put(head, static_cast<std::int32_t>(process_rank.load(std::memory_order_relaxed)));    // rank, -1: none
  put(head, static_cast<std::uint32_t>(process_ranks.load(std::memory_order_relaxed)));  // ranks, 0: none
  for (const kind& k : kinds) {
    std::string name = k.fn ? names.name_of(k.fn) : k.name;
    if (name.size() > 0xFFFF) name.resize(0xFFFF);
    put(head, k.id);
    put(head, static_cast<std::uint16_t>(k.cat));
    put(head, static_cast<std::uint16_t>(name.size()));
    head.insert(head.end(), name.begin(), name.end());
  }

  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "weft: WEFT_TRACE=%s: cannot open the trace file: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  bool ok = write_all(f, head.data(), head.size());
  auto write_buffer = [&](std::uint32_t id, const buffer& b) {
    std::vector<char> block;
    std::uint64_t count = static_cast<std::uint64_t>(b.cursor - b.begin);
    put(block, id);
    put(block, std::uint32_t{0});
    put(block, count);
    put(block, b.dropped);
    ok = ok && write_all(f, block.data(), block.size()) && write_all(f, b.begin, count * sizeof(event));
  };
  for (std::size_t i = 0; i < workers.size(); ++i) write_buffer(static_cast<std::uint32_t>(i), *workers[i]);
  write_buffer(0xFFFFFFFFu, shared);
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::fprintf(stderr, "weft: WEFT_TRACE=%s: writing the trace file failed: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  if (dropped) {
    std::fprintf(
        stderr,
        "weft: WARNING: the trace %s lost %llu event(s) because a buffer was full; raise WEFT_TRACE_BUFFER "
        "(bytes per worker, now %llu)\n",
        path.c_str(), static_cast<unsigned long long>(dropped),
        static_cast<unsigned long long>(workers.empty() ? 0 : (workers[0]->end - workers[0]->begin) * sizeof(event)));
  }
  return true;
}

}  // namespace weft::trace
