#!/usr/bin/env bash
# Simulator benchmark: the reference's scaling workloads (simulator spec,
# section 13), run with `chakra sim` and timed as whole processes. Prints,
# per workload, the finish time (which must equal the reference's), CPU
# seconds, wall seconds (rank files load on one thread per CPU), peak RSS,
# and the cost per message (CPU) and memory per trace node, next to
# the reference's published cost.
#
# usage: bench/sim_bench.sh [BUILD_DIR=build] [--quick]
#   --quick skips the 4096-NPU run and the 64 x 100k workload.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
quick=0
for a in "$@"; do
  if [ "$a" = "--quick" ]; then quick=1; else build=$a; fi
done
chakra=$build/bin/chakra
simgen=$build/bin/simgen
[ -x "$chakra" ] && [ -x "$simgen" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
work=$(mktemp -d /tmp/chakra-sim-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
sys=examples/system.json   # 4 chunks, 1 active chunk, ring, local-mem-bw 1600

net() { # topology npus -> path
  printf 'topology: [ %s ]\nnpus_count: [ %s ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' "$1" "$2" > "$work/$1$2.yml"
  echo "$work/$1$2.yml"
}

printf '%-34s %14s %8s %7s %9s %12s %12s   %s\n' workload finish_ns cpu_s wall_s rss_MB ns/message B/node "reference (cpu s, RSS)"
run() { # name prefix network model reference
  local name=$1 prefix=$2 network=$3 model=$4 ref=$5
  local out=$work/out.txt tim=$work/time.txt
  /usr/bin/time -f "%e %U %S %M" -o "$tim" "$chakra" sim -q --workload-configuration="$prefix" \
    --system-configuration=$sys --network-configuration="$network" --network-model="$model" \
    --report="$work/report.json" > "$out"
  /usr/bin/python3 - "$name" "$tim" "$work/report.json" "$ref" <<'PY'
import json, sys
name, tim, rep, ref = sys.argv[1:5]
wall, user, sys_s, rss_kb = open(tim).read().split()[-4:]
cpu = float(user) + float(sys_s)
r = json.load(open(rep))
msgs = r["messages"]
nodes = sum(x["nodes"] for x in r["ranks"])
per_msg = "%.1f" % (cpu * 1e9 / msgs) if msgs else "-"
print("%-34s %14d %8.2f %7.2f %9.1f %12s %12d   %s" % (name, r["max_finish_ns"], cpu, float(wall), int(rss_kb) / 1024,
                                                 per_msg, int(rss_kb) * 1024 // max(nodes, 1), ref))
PY
}

for n in 64 256 1024; do
  "$chakra" gen microbench --coll all_reduce --npus $n --size 1M -o "$work/ar$n"
  run "allreduce 1MiB ring$n unaware" "$work/ar$n" "$(net Ring $n)" unaware "$(case $n in 64) echo '0.04, 14 MB';; 256) echo '0.53, 37 MB';; 1024) echo '10.1, 364 MB';; esac)"
  run "allreduce 1MiB switch$n unaware" "$work/ar$n" "$(net Switch $n)" unaware "$(case $n in 64) echo '0.03, 14 MB';; 256) echo '0.52, 36 MB';; 1024) echo '9.7, 364 MB';; esac)"
  [ $n -ge 256 ] && run "allreduce 1MiB switch$n aware" "$work/ar$n" "$(net Switch $n)" aware "$(case $n in 256) echo '0.87, 37 MB';; 1024) echo '16.3, 365 MB';; esac)"
done
if [ $quick = 0 ]; then
  "$chakra" gen microbench --coll all_reduce --npus 4096 --size 1M -o "$work/ar4096"
  run "allreduce 1MiB switch4096 unaware" "$work/ar4096" "$(net Switch 4096)" unaware "282.6, 5.59 GB"
  rm -f "$work"/ar4096.*
fi
"$simgen" compute 8 100000 "$work/comp8"
run "compute chain 8 x 100k" "$work/comp8" "$(net Ring 8)" unaware "7.95, 1.00 GB"
"$simgen" chain 8 50000 "$work/chain8"
run "comp->AR chain k=50000, 8 NPUs" "$work/chain8" "$(net Ring 8)" unaware "32.6, 1.00 GB"
run "comp->AR chain k=50000 aware" "$work/chain8" "$(net Ring 8)" aware "39.3, 1.00 GB"
"$simgen" overlap 8 50000 "$work/ovl8"
run "comp||AR overlap k=50000" "$work/ovl8" "$(net Ring 8)" unaware "37.5, 1.05 GB"
if [ $quick = 0 ]; then
  "$simgen" compute 64 100000 "$work/comp64"
  run "compute chain 64 x 100k" "$work/comp64" "$(net Ring 64)" unaware "90.4, 7.90 GB"
fi
