#!/usr/bin/env bash
# Open MPI's remote-shell agent for netrun.sh (plm_rsh_agent). netrun.sh copies it next to its map
# file, one line per emulated node: "IP NAMESPACE HOSTNAME CPUS" (CPUS "-" = no pinning).
#   agent.sh HOST COMMAND...              as mpirun calls ssh: start COMMAND (an orted) on node HOST,
#                                         i.e. inside its namespace with a hostname of its own
#   agent.sh --in-node NAME CPUS COMMAND  the part that runs inside the namespace
set -euo pipefail

if [[ ${1:-} == --in-node ]]; then
  # A UTS namespace of its own (unshare --uts) lets each node report its own hostname.
  hostname "$2"
  if [[ $3 == - ]]; then exec sh -c "$4"; fi
  # The node's cores: its orted and ranks inherit the mask, as on a machine with only those cores.
  exec taskset -c "$3" sh -c "$4"
fi

host=$1
shift
map="$(dirname "$0")/map"
while read -r ip ns name cpus; do
  if [[ $ip == "$host" ]]; then
    # Like ssh, the remaining arguments form one shell command line.
    exec ip netns exec "$ns" unshare --uts bash "$0" --in-node "$name" "$cpus" "$*"
  fi
done <"$map"
echo "agent.sh: unknown node $host" >&2
exit 1
