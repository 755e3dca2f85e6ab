// wnswitch: a user-space star switch for netrun.sh, used when the kernel has no sch_netem.
//
// It owns one TUN device (layer 3, no packet info) per rank plus one for the host, routes IPv4
// packets by the last octet of the destination (.1 = host, .r+2 = rank r) and emulates each rank's
// link like netrun.sh's netem setup does: a packet from rank A to rank B is serialised at the rate on
// A's uplink, waits delay/2, is serialised again on B's downlink and waits delay/2 more, so the
// one-way rank-to-rank delay is the configured delay and both directions of each rank's port are
// limited to the rate. The host port is not emulated (only the launcher's out-of-band traffic uses it).
//
// usage: wnswitch IFPREFIX NRANKS DELAY_NS RATE_BPS MTU SUBNET_A.B.C READY_FILE
//   creates IFPREFIX t0..t(N-1) and IFPREFIX th, writes READY_FILE once they exist, then forwards
//   until killed. RATE_BPS 0 = unlimited. The devices vanish when the process exits (not persistent).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { max_ports = 254, read_burst = 64 };
static const size_t queue_byte_limit = 32u << 20;  // per destination: drop-tail beyond, TCP recovers

struct pkt {
  struct pkt* next;
  uint64_t due;  // CLOCK_MONOTONIC ns at which it leaves the switch
  uint32_t len;
  unsigned char data[];
};

struct port {
  int fd;
  int emulated;        // rank ports are, the host port is not
  uint64_t up_free;    // when this port's uplink (rank -> switch) is idle again
  uint64_t down_free;  // when its downlink (switch -> rank) is idle again
  struct pkt *head, *tail;
  size_t queued;  // bytes
};

static struct port ports[max_ports + 1];
static int nports;
static uint64_t half_delay, rate_bps;
static size_t mtu;
static unsigned long drops;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char* what) {
  perror(what);
  exit(1);
}

static int open_tun(const char* name) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("open /dev/net/tun");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) die("TUNSETIFF");
  return fd;
}

// Serialisation time of len bytes at the rate; 14 bytes stand for the Ethernet header that netem
// counts on a veth, so both backends charge the same bytes.
static uint64_t wire_ns(uint32_t len) {
  if (!rate_bps) return 0;
  return (uint64_t)((len + 14u) * 8.0 * 1e9 / (double)rate_bps);
}

static void enqueue(int src, int dst, struct pkt* p, uint64_t now) {
  struct port* s = &ports[src];
  struct port* d = &ports[dst];
  if (d->queued + p->len > queue_byte_limit) {
    ++drops;
    free(p);
    return;
  }
  uint64_t t = now;
  if (s->emulated) {
    s->up_free = (s->up_free > t ? s->up_free : t) + wire_ns(p->len);
    t = s->up_free + half_delay;
  }
  if (d->emulated) {
    d->down_free = (d->down_free > t ? d->down_free : t) + wire_ns(p->len);
    t = d->down_free + half_delay;
  }
  // Keep each queue in order: only packets to the host port can come out of order (several
  // senders, no downlink to serialise them), and that is launcher traffic.
  if (d->tail && t < d->tail->due) t = d->tail->due;
  p->due = t;
  p->next = NULL;
  if (d->tail)
    d->tail->next = p;
  else
    d->head = p;
  d->tail = p;
  d->queued += p->len;
}

// Port of an IPv4 destination, or -1 (not ours: dropped).
static int route(const unsigned char* ip, uint32_t len, const unsigned char net[3]) {
  if (len < 20 || (ip[0] >> 4) != 4) return -1;
  const unsigned char* dst = ip + 16;
  if (dst[0] != net[0] || dst[1] != net[1] || dst[2] != net[2]) return -1;
  if (dst[3] == 1) return nports - 1;  // host
  int r = dst[3] - 2;
  return r >= 0 && r < nports - 1 ? r : -1;
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: %s IFPREFIX NRANKS DELAY_NS RATE_BPS MTU A.B.C READY_FILE\n", argv[0]);
    return 2;
  }
  const char* prefix = argv[1];
  int nranks = atoi(argv[2]);
  half_delay = strtoull(argv[3], NULL, 10) / 2;
  rate_bps = strtoull(argv[4], NULL, 10);
  mtu = (size_t)atoi(argv[5]);
  unsigned a, b, c;
  if (nranks < 1 || nranks > max_ports - 1 || mtu < 576 || mtu > 65535 ||
      sscanf(argv[6], "%u.%u.%u", &a, &b, &c) != 3) {
    fprintf(stderr, "wnswitch: bad arguments\n");
    return 2;
  }
  const unsigned char net[3] = {(unsigned char)a, (unsigned char)b, (unsigned char)c};

  // Die with netrun.sh, so a killed run leaves no forwarding process (its devices go with it).
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) return 1;
  // Sub-ms sleeps must not be rounded up by the default 50 us timer slack; a real-time priority lets
  // the switch preempt ranks that busy-poll (Open MPI's progress loop) on an oversubscribed box.
  prctl(PR_SET_TIMERSLACK, 1UL);
  struct sched_param sp = {.sched_priority = 1};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
    fprintf(stderr, "wnswitch: no real-time priority (%s): delays will be noisier\n", strerror(errno));

  nports = nranks + 1;
  char name[IFNAMSIZ + 8];
  for (int i = 0; i < nports; ++i) {
    if (i < nranks)
      snprintf(name, sizeof name, "%st%d", prefix, i);
    else
      snprintf(name, sizeof name, "%sth", prefix);
    if (strlen(name) >= IFNAMSIZ) {
      fprintf(stderr, "wnswitch: interface name %s too long\n", name);
      return 2;
    }
    ports[i].fd = open_tun(name);
    ports[i].emulated = i < nranks;
  }
  FILE* ready = fopen(argv[7], "w");
  if (!ready) die("ready file");
  fclose(ready);

  struct pollfd pfds[max_ports + 1];
  for (int i = 0; i < nports; ++i) pfds[i] = (struct pollfd){.fd = ports[i].fd, .events = POLLIN};

  for (;;) {
    uint64_t now = now_ns();
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < nports; ++i) {
      struct port* p = &ports[i];
      while (p->head && p->head->due <= now) {
        struct pkt* k = p->head;
        // A TUN write hands the packet to the receiving stack at once; a failure is a drop.
        if (write(p->fd, k->data, k->len) < 0) ++drops;
        p->head = k->next;
        if (!p->head) p->tail = NULL;
        p->queued -= k->len;
        free(k);
      }
      if (p->head && p->head->due < next) next = p->head->due;
    }
    struct timespec ts, *tsp = NULL;
    if (next != UINT64_MAX) {
      uint64_t wait = next - now;
      ts.tv_sec = (time_t)(wait / 1000000000u);
      ts.tv_nsec = (long)(wait % 1000000000u);
      tsp = &ts;
    }
    int n = ppoll(pfds, (nfds_t)nports, tsp, NULL);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("ppoll");
    }
    if (n == 0) continue;
    now = now_ns();
    for (int i = 0; i < nports; ++i) {
      if (!(pfds[i].revents & POLLIN)) continue;
      for (int k = 0; k < read_burst; ++k) {
        struct pkt* p = malloc(sizeof *p + mtu);
        if (!p) die("malloc");
        ssize_t len = read(ports[i].fd, p->data, mtu);
        if (len <= 0) {
          free(p);
          break;
        }
        p->len = (uint32_t)len;
        int dst = route(p->data, p->len, net);
        if (dst < 0 || dst == i) {
          free(p);
          continue;
        }
        enqueue(i, dst, p, now);
      }
    }
  }
}
