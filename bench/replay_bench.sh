#!/usr/bin/env bash
# Replay overhead benchmark: what `chakra replay` itself costs per node,
# beyond MPI's own time, with --compute=skip (issue 15's floor: <= 2 us per
# node on a 1M-node-per-rank trace with 4 processes).
#
# Workloads (bench/simgen, the same graph on every rank):
#   compute  1M compute nodes in a chain: no MPI call at all, so the whole
#            run is the replayer (issue rule, clock reads, bookkeeping)
#   chain    k x (compute -> 64-byte all-reduce), 2k = NODES/10 nodes
#            (CHAIN_NODES to change; 1M takes ~10 min on a loaded 2-core VM): the
#            replayer's time is the run minus the time inside MPI calls
#            (posting and testing, measured around each call: mpi_ns) and
#            minus idle polls (waiting for the other ranks: idle_ns)
# Printed per workload: the slowest rank's replay time, its time in MPI,
# time waiting with nothing to do (idle), the rest per node (the replayer's
# own time), load + run wall time and peak RSS per process.
#
# usage: bench/replay_bench.sh [BUILD_DIR=build] [NODES=1000000] [NP=4]   (env CHAIN_NODES)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
nodes=${2:-1000000}
np=${3:-4}
chakra=$build/bin/chakra
simgen=$build/bin/simgen
[ -x "$chakra" ] && [ -x "$simgen" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
"$chakra" --help | grep -q ' replay ' || { echo "chakra was built without MPI: no replay" >&2; exit 2; }
work=$(mktemp -d /tmp/chakra-replay-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $np processes (oversubscribed if more than cores)"

"$simgen" compute "$np" "$nodes" "$work/compute" 0
chain=${CHAIN_NODES:-$((nodes / 10))} # all-reduces on an oversubscribed VM take ~1 ms each
"$simgen" chain "$np" $((chain / 2)) "$work/chain" 0 64

printf '%-9s %9s %11s %11s %11s %11s %9s %9s\n' workload nodes/rank loop_ms mpi_ms idle_ms own_ns/node wall_s rss_MB
for w in compute chain; do
  mpirun --oversubscribe -np "$np" /usr/bin/time -f "%e %M" -o "$work/time.%q{OMPI_COMM_WORLD_RANK}" \
    "$chakra" replay "$work/$w" --compute=skip --no-validate -q --report "$work/$w.json" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  /usr/bin/python3 - "$w" "$work/$w.json" "$work"/time.* <<'PY'
import json, sys
name, rep, times = sys.argv[1], sys.argv[2], sys.argv[3:]
r = json.load(open(rep))
k = max(r["ranks"], key=lambda k: k["replayer_ns"])
own = k["replayer_ns"]
wall = max(float(open(t).read().split()[-2]) for t in times)
rss = max(int(open(t).read().split()[-1]) for t in times) / 1024
print("%-9s %9d %11.1f %11.1f %11.1f %11.1f %9.2f %9.0f" % (name, k["nodes"], k["loop_ns"] / 1e6, k["mpi_ns"] / 1e6, k["idle_ns"] / 1e6,
                                                   own / k["nodes"], wall, rss))
PY
  rm -f "$work"/time.*
done
