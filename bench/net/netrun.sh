#!/usr/bin/env bash
# netrun.sh: run an MPI command on an emulated cluster network on this one machine. Every rank is a
# node of its own (network + UTS namespace, optionally its own cores), ranks talk over TCP through
# links with the requested one-way delay and rate. See bench/net/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/netrun.sh"

usage() {
  cat <<'EOF'
usage: netrun.sh [options] [--] COMMAND [ARGS...]
       netrun.sh --self-test [--backend B]
       netrun.sh --help

Runs COMMAND as an Open MPI job, one rank per emulated node (a network namespace), the nodes joined
by links with a one-way rank-to-rank delay and a rate; ranks talk TCP (btl tcp,self; no shared memory).

options:
  --ranks N, -n N, -np N  ranks = nodes (default 2)
  --delay D               one-way delay between two ranks: 5us, 0.05ms, 200ns, 0 (default 0)
  --rate R                rate of each rank's port, each direction: 100gbit, 10gbit, 500mbit;
                          0 = unlimited (default 0)
  --timeout S             kill the whole job after S seconds (default 600); exit code 124
  --backend B             auto (default): veth if the kernel has sch_netem (or --delay is 0),
                          else tun; veth: veth pairs + bridge + netem/tbf (exit 77 without
                          sch_netem when --delay > 0); tun: user-space switch (wnswitch.c)
  --mtu M                 link MTU (default 9000)
  --node-cores C          auto (default): each node gets its own slice of this process's cores
                          (ranks <= cores), else one core each, round robin; all: no pinning
  -x VAR[=VALUE]          pass VAR to the ranks (as mpirun -x); WEFT_*, OMP_*, LD_PRELOAD and
                          LD_LIBRARY_PATH of the caller's environment are passed anyway
  --mpirun-arg ARG        one more argument for mpirun (repeatable)
  -v, --verbose           print the setup commands and the mpirun command line
  --oversubscribe, --bind-to X
                          accepted and ignored (netrun.sh passes both itself), so that
                          MPIEXEC="bash bench/net/netrun.sh --delay 5us --rate 100gbit" can stand
                          in for "mpiexec --oversubscribe --bind-to none -n R"
  --version               mpirun --version
  --self-test             measure latency and bandwidth between 2 ranks at 5us/100gbit,
                          50us/10gbit and 50us/1gbit and check them; non-zero exit on failure

Needs root (network namespaces). Exit code 77 (CTest's skip) when the kernel or the permissions
do not allow the emulation, with one line saying what is missing.
EOF
}

die() {
  echo "netrun: $*" >&2
  exit 2
}
skip() {
  echo "netrun: SKIP: $*" >&2
  exit 77
}
verbose=0
run() {
  if ((verbose)); then echo "+ $*" >&2; fi
  "$@"
}

# --- argument parsing ---------------------------------------------------------------------------
ranks=2
delay_arg=0
rate_arg=0
timeout_s=600
backend=auto
mtu=9000
node_cores=auto
self_test=0
xvars=()
mpirun_extra=()
while (($#)); do
  case $1 in
    --ranks | -n | -np) ranks=${2:?}; shift 2 ;;
    --delay) delay_arg=${2:?}; shift 2 ;;
    --rate) rate_arg=${2:?}; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --backend) backend=${2:?}; shift 2 ;;
    --mtu) mtu=${2:?}; shift 2 ;;
    --node-cores) node_cores=${2:?}; shift 2 ;;
    -x) xvars+=("${2:?}"); shift 2 ;;
    --mpirun-arg) mpirun_extra+=("${2?}"); shift 2 ;;
    -v | --verbose) verbose=1; shift ;;
    --oversubscribe) shift ;;
    --bind-to) shift 2 ;;
    --version) exec mpirun --version ;;
    --self-test) self_test=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
cmd=("$@")

if ! [[ $ranks =~ ^[0-9]+$ ]] || ((ranks < 1 || ranks > 200)); then die "--ranks must be 1..200"; fi
if ! [[ $timeout_s =~ ^[0-9]+$ ]] || ((timeout_s == 0)); then die "--timeout must be a positive integer"; fi
if ! [[ $mtu =~ ^[0-9]+$ ]] || ((mtu < 1280 || mtu > 65000)); then die "--mtu must be 1280..65000"; fi
case $backend in auto | veth | tun) ;; *) die "--backend must be auto, veth or tun" ;; esac
case $node_cores in auto | all) ;; *) die "--node-cores must be auto or all" ;; esac

# to_ns D: a duration (ns, us, ms, s; a bare number is us) in integer nanoseconds.
to_ns() {
  [[ $1 =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|ms|s)?$ ]] || die "bad duration '$1' (e.g. 5us, 0.1ms)"
  local scale
  case ${BASH_REMATCH[3]} in ns) scale=1 ;; ms) scale=1000000 ;; s) scale=1000000000 ;; *) scale=1000 ;; esac
  awk -v v="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { printf "%.0f\n", v * s }'
}
# to_bps R: a rate in bit/s (bit, kbit, mbit, gbit, tbit: powers of 1000 as in tc); 0 = unlimited.
to_bps() {
  local r=${1,,}
  [[ $r =~ ^([0-9]+(\.[0-9]*)?)(bit|kbit|mbit|gbit|tbit)?$ ]] || die "bad rate '$1' (e.g. 10gbit, 500mbit; tc's bytes units like gbps are not taken)"
  local scale
  case ${BASH_REMATCH[3]} in kbit) scale=1e3 ;; mbit) scale=1e6 ;; gbit) scale=1e9 ;; tbit) scale=1e12 ;; *) scale=1 ;; esac
  awk -v v="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { printf "%.0f\n", v * s }'
}
delay_ns=$(to_ns "$delay_arg")
rate_bps=$(to_bps "$rate_arg")

# --- self-test ----------------------------------------------------------------------------------
# Runs this script itself on a ping-pong program for three settings and checks what it measures.
if ((self_test)); then
  command -v mpicc >/dev/null || skip "mpicc not found"
  st_tmp=$(mktemp -d "/tmp/weftnet$$.XXXXXX")
  trap 'rm -rf "$st_tmp"' EXIT
  mpicc -O2 -o "$st_tmp/pingpong" "$here/pingpong.c"
  fail=0
  declare -A lat_min=()
  for setting in "5us 100gbit" "50us 10gbit" "50us 1gbit"; do
    read -r d r <<<"$setting"
    rc=0
    out=$(bash "$self" --ranks 2 --delay "$d" --rate "$r" --timeout 120 --backend "$backend" \
      -- "$st_tmp/pingpong" 2000 10 2>&1) || rc=$?
    if ((rc == 77)); then
      echo "$out" | grep 'SKIP' >&2
      exit 77
    fi
    line=$(echo "$out" | grep '^netrun-selftest ' || true)
    used=$(echo "$out" | sed -n 's/^netrun: .* backend \([a-z]*\).*/\1/p' | head -n 1)
    if ((rc != 0)) || [[ -z $line ]]; then
      echo "delay $d rate $r: FAILED (exit $rc)"
      echo "$out" | tail -n 20
      fail=1
      continue
    fi
    [[ $line =~ lat_min_us=([0-9.]+)\ lat_med_us=([0-9.]+)\ lat_avg_us=([0-9.]+)\ bw_gbit=([0-9.]+) ]] ||
      die "cannot parse: $line"
    lmin=${BASH_REMATCH[1]} lmed=${BASH_REMATCH[2]} lavg=${BASH_REMATCH[3]} bw=${BASH_REMATCH[4]}
    dn=$(to_ns "$d")
    rb=$(to_bps "$r")
    lat_min[$d]=$lmin
    # Latency: even the fastest round trip must have waited the delay both ways. Bandwidth: MPI
    # payload cannot beat the port rate (2% slack for clock granularity); the 1gbit setting, which
    # any backend reaches on this box, must also get at least half of it (the limiter is not too tight).
    verdict=$(awk -v lmin="$lmin" -v dn="$dn" -v bw="$bw" -v rb="$rb" 'BEGIN {
      v = ""
      if (lmin * 1000 < dn) v = v " latency below the delay;"
      if (bw * 1e9 > rb * 1.02) v = v " bandwidth above the rate;"
      if (rb <= 1e9 && bw * 1e9 < rb * 0.5) v = v " bandwidth under half the rate;"
      print (v == "" ? "ok" : "FAIL:" v) }')
    printf 'delay %-4s rate %-7s backend %-4s  one-way latency min %7.2f median %7.2f mean %7.2f us  bandwidth %6.3f Gbit/s  %s\n' \
      "$d" "$r" "${used:-?}" "$lmin" "$lmed" "$lavg" "$bw" "$verdict"
    [[ $verdict == ok ]] || fail=1
  done
  # The delay must really be applied, not hidden in the emulation's own overhead: 45 us more
  # configured delay must show as (at least 80% of) 45 us more measured latency.
  if [[ -n ${lat_min[5us]:-} && -n ${lat_min[50us]:-} ]]; then
    diff_ok=$(awk -v a="${lat_min[5us]}" -v b="${lat_min[50us]}" 'BEGIN { print ((b - a >= 36) ? "ok" : "FAIL") }')
    echo "50us - 5us minimum latency: $(awk -v a="${lat_min[5us]}" -v b="${lat_min[50us]}" 'BEGIN { printf "%.2f", b - a }') us (expected about 45)   $diff_ok"
    [[ $diff_ok == ok ]] || fail=1
  fi
  if ((fail)); then
    echo "self-test: FAILED"
    exit 1
  fi
  echo "self-test: ok"
  exit 0
fi

(($# > 0)) || die "no command given (see --help)"

# --- prerequisites ------------------------------------------------------------------------------
((EUID == 0)) || skip "needs root for network namespaces (run as root)"
for tool in ip tc mpirun unshare taskset timeout flock setpriv; do
  command -v "$tool" >/dev/null || skip "$tool not found"
done

# Names: namespaces weftnet<pid>-r<rank>, links wn<pid>... (interface names have 15 characters at
# most). The pid makes concurrent runs distinct and lets a later run tell a crashed run's leftovers.
ns_prefix="weftnet$$-"
if_prefix="wn$$"
tmp=""
switch_pid=""
child=""
created_ns=()

# stale PID: whether resources named after PID belong to no live netrun.sh.
stale() {
  [[ -r /proc/$1/cmdline ]] || return 0
  ! tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q netrun
}

# kill_ns NS: end every process still inside NS (orteds, ranks), then remove it.
kill_ns() {
  local pids
  pids=$(ip netns pids "$1" 2>/dev/null || true)
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $pids 2>/dev/null || true
  fi
  ip netns del "$1" 2>/dev/null || true
}

clean_stale() {
  local ns pid link
  for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
    if [[ $ns =~ ^weftnet([0-9]+)- ]] && stale "${BASH_REMATCH[1]}"; then kill_ns "$ns"; fi
  done
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
    if [[ $link =~ ^wn([0-9]+)(br|th|h[0-9]+|t[0-9]+)$ ]] && stale "${BASH_REMATCH[1]}"; then
      ip link del "$link" 2>/dev/null || true
    fi
  done
  # mpirun (under timeout) of a run killed with SIGKILL before setpriv's death signal could act.
  for proc in /proc/[0-9]*; do
    [[ -r $proc/cmdline ]] || continue
    if [[ $(tr '\0' ' ' 2>/dev/null <"$proc/cmdline") =~ /tmp/weftnet([0-9]+)\.[^/]*/hosts ]] &&
      stale "${BASH_REMATCH[1]}"; then
      kill -KILL "${proc#/proc/}" 2>/dev/null || true
    fi
  done
  for dir in /tmp/weftnet[0-9]*.*; do
    [[ -d $dir && $dir =~ ^/tmp/weftnet([0-9]+)\. ]] || continue
    pid=${BASH_REMATCH[1]}
    if stale "$pid"; then rm -rf "$dir"; fi
  done
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  set +e
  trap - EXIT INT TERM
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    # timeout passes TERM on to mpirun, which then stops its daemons; after 5 s, force.
    kill -TERM "$child" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$child" 2>/dev/null
    kill -KILL "$child" 2>/dev/null
  fi
  for ns in "${created_ns[@]}"; do kill_ns "$ns"; done
  if [[ -n $switch_pid ]]; then
    kill "$switch_pid" 2>/dev/null
    wait "$switch_pid" 2>/dev/null
  fi
  ip link del "${if_prefix}br" 2>/dev/null
  ip link del "${if_prefix}th" 2>/dev/null
  [[ -n $tmp ]] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp=$(mktemp -d "/tmp/weftnet$$.XXXXXX")

# Setup under a lock: concurrent runs must not pick the same subnet.
exec 9>/tmp/weftnet.lock
flock 9
clean_stale

# Probe in a namespace of our own, so nothing of the host is touched.
probe="${ns_prefix}probe"
created_ns+=("$probe")
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces (ip netns add failed)"
have_netem=0
if tc -n "$probe" qdisc add dev lo root netem delay 1us 2>/dev/null; then have_netem=1; fi
kill_ns "$probe"
created_ns=()

if [[ $backend == auto ]]; then
  if ((have_netem || delay_ns == 0)); then backend=veth; else backend=tun; fi
fi
if [[ $backend == veth ]] && ((delay_ns > 0 && !have_netem)); then
  skip "the kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM) for --delay; --backend tun emulates it in user space"
fi
if [[ $backend == tun ]]; then
  [[ -c /dev/net/tun ]] || skip "no /dev/net/tun (CONFIG_TUN) for --backend tun"
  command -v cc >/dev/null || skip "no C compiler (cc) to build the user-space switch"
fi

# A /24 under 10.213/16 that no route of the host covers (host .1, rank r .r+2).
subnet=""
for i in $(seq 0 253); do
  x=$((($$ + i) % 254 + 1))
  if ! ip -4 route show table all match "10.213.$x.0/24" 2>/dev/null | grep -q -v '^default'; then
    subnet="10.213.$x"
    break
  fi
done
[[ -n $subnet ]] || die "no free 10.213.x.0/24 subnet"
cidr="$subnet.0/24"

# Each link end carries half the delay: a rank-to-rank packet leaves through the sender's link and
# enters through the receiver's, so it waits delay/2 twice; both ends get the full rate (a full-
# duplex port). The host's own address (launcher traffic only) sits behind no emulated end of its own.
half_us=$(awk -v d="$delay_ns" 'BEGIN { printf "%.3f", d / 2000 }')
qdisc=()
if ((delay_ns > 0)); then
  qdisc=(netem delay "${half_us}us" limit 100000)
  ((rate_bps > 0)) && qdisc+=(rate "${rate_bps}bit")
elif ((rate_bps > 0)); then
  # No delay, rate only: tbf needs no netem. A burst of at least 128 KiB lets GSO packets (up to
  # 64 KiB on a veth) through whole; the queue holds 5 ms at the rate.
  burst=$(awk -v r="$rate_bps" 'BEGIN { b = r / 8 * 100e-6; printf "%.0f", (b > 131072 ? b : 131072) }')
  limit=$(awk -v r="$rate_bps" 'BEGIN { l = r / 8 * 5e-3; printf "%.0f", (l > 4194304 ? l : 4194304) }')
  qdisc=(tbf rate "${rate_bps}bit" burst "$burst" limit "$limit")
fi

for ((r = 0; r < ranks; r++)); do
  ns="${ns_prefix}r$r"
  created_ns+=("$ns")
  run ip netns add "$ns"
  run ip -n "$ns" link set lo up
  # IPv6 would only add router solicitations to the emulated links.
  run ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

if [[ $backend == veth ]]; then
  # A bridge in the root namespace joins the host ends of the ranks' veth pairs; the host's address
  # on it lets mpirun's out-of-band channel reach the daemons in the namespaces.
  run ip link add "${if_prefix}br" type bridge
  run ip addr add "$subnet.1/24" dev "${if_prefix}br"
  for ((r = 0; r < ranks; r++)); do
    ns="${ns_prefix}r$r"
    host_end="${if_prefix}h$r"
    run ip link add "$host_end" type veth peer name eth0 netns "$ns"
    run ip link set "$host_end" mtu "$mtu" master "${if_prefix}br" up
    run ip -n "$ns" link set eth0 mtu "$mtu" up
    run ip -n "$ns" addr add "$subnet.$((r + 2))/24" dev eth0
    if ((${#qdisc[@]})); then
      run tc -n "$ns" qdisc add dev eth0 root "${qdisc[@]}"
      run tc qdisc add dev "$host_end" root "${qdisc[@]}"
    fi
  done
  run ip link set "${if_prefix}br" up
  how="veth pairs + bridge, ${qdisc[0]:-no qdisc} on both ends of each rank's link"
else
  # The switch creates one TUN device per rank and one for the host; each rank's goes into its
  # namespace as eth0. The devices are not persistent: they go when the switch exits.
  run cc -O2 -o "$tmp/wnswitch" "$here/wnswitch.c"
  "$tmp/wnswitch" "$if_prefix" "$ranks" "$delay_ns" "$rate_bps" "$mtu" "$subnet" "$tmp/ready" &
  switch_pid=$!
  for _ in $(seq 100); do
    [[ -e $tmp/ready ]] && break
    kill -0 "$switch_pid" 2>/dev/null || die "the user-space switch did not start"
    sleep 0.05
  done
  [[ -e $tmp/ready ]] || die "the user-space switch did not get ready"
  run ip link set "${if_prefix}th" mtu "$mtu" up
  run ip addr add "$subnet.1/24" dev "${if_prefix}th"
  for ((r = 0; r < ranks; r++)); do
    ns="${ns_prefix}r$r"
    run ip link set "${if_prefix}t$r" netns "$ns"
    run ip -n "$ns" link set "${if_prefix}t$r" name eth0
    run ip -n "$ns" link set eth0 mtu "$mtu" up
    run ip -n "$ns" addr add "$subnet.$((r + 2))/24" dev eth0
  done
  how="user-space switch over TUN devices (wnswitch), delay/2 and the rate on each side of it"
fi
flock -u 9
exec 9>&-

# --- nodes: hostfile, agent map, cores ----------------------------------------------------------
mapfile -t cpus < <(awk '/^Cpus_allowed_list/ { n = split($2, parts, ","); for (i = 1; i <= n; i++) {
  m = split(parts[i], ab, "-"); lo = ab[1]; hi = (m > 1) ? ab[2] : ab[1]; for (c = lo; c <= hi; c++) print c } }' /proc/self/status)
ncpu=${#cpus[@]}
cp "$here/agent.sh" "$tmp/agent.sh"
chmod +x "$tmp/agent.sh"
: >"$tmp/hosts"
: >"$tmp/map"
for ((r = 0; r < ranks; r++)); do
  set_cpus=-
  if [[ $node_cores == auto ]] && ((ncpu > 0)); then
    if ((ranks <= ncpu)); then
      lo=$((r * ncpu / ranks))
      hi=$(((r + 1) * ncpu / ranks - 1))
      set_cpus=$(printf '%s\n' "${cpus[@]:lo:hi-lo+1}" | paste -sd,)
    else
      set_cpus=${cpus[r % ncpu]}
    fi
  fi
  echo "$subnet.$((r + 2)) slots=1" >>"$tmp/hosts"
  echo "$subnet.$((r + 2)) ${ns_prefix}r$r node$r $set_cpus" >>"$tmp/map"
done

# --- environment for the ranks ------------------------------------------------------------------
xargs_mpi=()
while read -r var; do
  case $var in WEFT_* | OMP_* | LD_PRELOAD | LD_LIBRARY_PATH) xargs_mpi+=(-x "$var") ;; esac
done < <(compgen -e)
for v in "${xvars[@]}"; do xargs_mpi+=(-x "$v"); done

# --- the job ------------------------------------------------------------------------------------
# Every namespace is a remote node to mpirun: it starts one orted per node through agent.sh (no tree
# spawn, so all from here), the orteds call back over the emulated network to the host's address,
# and the ranks reach their orted over the namespace's own loopback. btl tcp,self without vader,
# pml ob1 (not ucx), and both TCP channels kept to the emulated subnet.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2054 # the commas are in "tcp,self", not between elements
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none --map-by node -np "$ranks"
  --hostfile "$tmp/hosts"
  --mca plm rsh --mca plm_rsh_agent "$tmp/agent.sh" --mca plm_rsh_no_tree_spawn 1
  --mca oob_tcp_if_include "$cidr"
  --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$cidr" --mca osc '^ucx'
  "${xargs_mpi[@]}" "${mpirun_extra[@]}" "${cmd[@]}")

echo "netrun: $ranks ranks, backend $backend ($how), one-way delay $delay_arg ($half_us us per link end), rate ${rate_arg} per port, subnet $cidr, timeout ${timeout_s}s" >&2
if ((verbose)); then echo "+ ${mpi[*]}" >&2; fi

# In the background, so that the INT/TERM traps run at once (bash runs traps only between
# foreground commands); stdin is passed explicitly (a background job would get /dev/null).
exec 3<&0
# setpriv: timeout (and through it mpirun) gets TERM if this script dies, even by SIGKILL.
setpriv --pdeathsig TERM timeout --kill-after=10 "$timeout_s" "${mpi[@]}" <&3 &
child=$!
rc=0
wait "$child" || rc=$?
child=""
if ((rc == 124 || rc == 137)); then
  echo "netrun: the job ran past --timeout ${timeout_s}s and was killed" >&2
  exit 124
fi
exit "$rc"
