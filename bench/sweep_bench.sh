#!/usr/bin/env bash
# Sweep scaling benchmark (issue 15's floor): 64 configurations of the
# 1,024-NPU ring all-reduce (1 MiB, `chakra gen microbench`) on 2 MPI
# processes must take at most 1.25x the time of 32 configurations on one
# process (parallel efficiency >= 80%; each process loads the workload once
# and runs its share of the grid in-process, one simulation at a time).
# Prints, per run: configurations, processes, wall seconds, CPU seconds
# (all processes), peak RSS per process; then the wall and CPU ratios.
# On a machine with fewer idle cores than processes the wall ratio measures
# the other load too: the busiest process's CPU seconds against the single
# process's (what the wall ratio is on idle cores), the total CPU ratio
# (2.0 = no work added by spreading) and the load average are printed
# beside it.
#
# usage: bench/sweep_bench.sh [BUILD_DIR=build] [MODEL=unaware]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
model=${2:-unaware}
chakra=$build/bin/chakra
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpirun not found (scripts/install-deps.sh installs Open MPI)" >&2; exit 2; }
work=$(mktemp -d /tmp/chakra-sweep-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$chakra" gen microbench --coll all_reduce --npus 1024 --size 1M -o "$work/ar" >/dev/null
printf 'topology: [ Ring ]\nnpus_count: [ 1024 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' > "$work/ring.yml"
sweep=(sweep -q --workload "$work/ar" --system examples/system.json --network "$work/ring.yml"
       --vary network-model="$model" --vary latency=100,200,300,400,500,600,700,800 --threads 1)
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %5s %8s %8s %12s %12s\n' configs procs wall_s cpu_s cpu_s/proc rss_MB/proc
measure() { # label configs procs -> "wall cpu"
  local configs=$1 procs=$2 bw
  case $configs in 32) bw=25,50,100,200;; 64) bw=25,50,100,200,400,800,1600,3200;; esac
  rm -f "$work"/time.*
  local t0 t1
  t0=$(date +%s.%N)
  if [ "$procs" = 1 ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.0" "$chakra" "${sweep[@]}" --vary bandwidth=$bw -o "$work/t$configs.csv"
  else
    # each process times itself into its own file (sh expands the rank)
    mpirun --oversubscribe -np "$procs" sh -c 'exec /usr/bin/time -f "%e %U %S %M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
      "$work/time" "$chakra" "${sweep[@]}" --vary bandwidth=$bw -o "$work/t$configs.csv"
  fi
  t1=$(date +%s.%N)
  [ "$(($(wc -l < "$work/t$configs.csv") - 1))" = "$configs" ] || { echo "expected $configs rows" >&2; exit 1; }
  if grep -q ',failed,\|,stuck,' "$work/t$configs.csv"; then echo "a configuration failed" >&2; exit 1; fi
  /usr/bin/python3 - "$configs" "$procs" "$t0" "$t1" "$work"/time.* <<'PY'
import sys
configs, procs, t0, t1, times = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]
cpu = rss = cmax = 0
for t in times:
    e, u, s, m = open(t).read().split()[-4:]
    cpu += float(u) + float(s)
    cmax = max(cmax, float(u) + float(s))
    rss = max(rss, int(m))
print("%-6s %5s %8.2f %8.2f %12.2f %12.1f" % (configs, procs, t1 - t0, cpu, cmax, rss / 1024))
open(sys.argv[5].rsplit("/", 1)[0] + "/res.%s" % configs, "w").write("%f %f %f\n" % (t1 - t0, cpu, cmax))
PY
}
measure 32 1
measure 64 2
/usr/bin/python3 - "$work/res.32" "$work/res.64" <<'PY'
import sys
w1, c1, m1 = map(float, open(sys.argv[1]).read().split())
w2, c2, m2 = map(float, open(sys.argv[2]).read().split())
print("wall ratio (64 on 2) / (32 on 1): %.3f   (floor <= 1.25; parallel efficiency %.0f%%)" % (w2 / w1, 100 * w1 / w2))
print("busiest process's CPU, (64 on 2) / (32 on 1): %.3f   (the wall ratio on idle cores)" % (m2 / m1))
print("total CPU ratio (64 on 2) / (32 on 1): %.3f   (2.0 = spreading adds no work)" % (c2 / c1))
PY
