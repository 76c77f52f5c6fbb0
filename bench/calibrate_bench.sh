#!/usr/bin/env bash
# Calibration accuracy (issue 15's floor): calibrate the network on this
# machine's shared-memory transport (`mpirun -np NP chakra replay --calibrate`),
# then replay microbenchmark collectives and simulate them on the calibrated
# network; the prediction must be within 25% of the replayed time at sizes
# >= 1 MiB. Prints the error at every size:
#   shared   ../shared/data/traces/astra-microbench/<coll>/<N>npus_1MB
#            (4 ranks; with --all also 8 and 16, heavily oversubscribed,
#            each calibrated on its own job size)
#   sizes    `chakra gen microbench` at 64 KiB .. 16 MiB on NP ranks
# Replayed time = median makespan over ITER iterations after 2 warm-ups
# (--compute skip); predicted = chakra sim's latest finish with the system
# file and the calibrated bandwidth and latency (npus_count set to the
# trace's ranks). Also prints the calibration's own table and its peak RSS.
#
# FIT_SYSTEM=1 (the default) calibrates the system too (--system-output:
# local-mem-bw and each collective's implementation) and predicts with the
# fitted system file; FIT_SYSTEM= keeps examples/system.json as it is.
#
# usage: bench/calibrate_bench.sh [BUILD_DIR=build] [--all]   (env NP=4 ITER=20 FIT_FROM=1M FIT_TO=4M FIT_SYSTEM=1)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
all=0
for a in "$@"; do
  if [ "$a" = "--all" ]; then all=1; else build=$a; fi
done
np=${NP:-4}
iter=${ITER:-20}
fit_from=${FIT_FROM:-1M}
fit_to=${FIT_TO:-4M}
FIT_SYSTEM=${FIT_SYSTEM-1}
chakra=$build/bin/chakra
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
"$chakra" --help | grep -q ' replay ' || { echo "chakra was built without MPI: no replay" >&2; exit 2; }
shared=${CHAKRA_SHARED:-../shared}/data/traces/astra-microbench
work=$(mktemp -d /tmp/chakra-calibrate-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=$work
base_sys=examples/system.json
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); calibrating on $np processes (fit from $fit_from)"

# calibrate N: fits on N processes; sets bw, lat, topo and sys for N ranks.
calibrate() {
  local n=$1
  /usr/bin/time -f "%e %M" -o "$work/time" mpirun --oversubscribe -np "$n" "$chakra" replay --calibrate \
    --system $base_sys -o "$work/cal$n.yml" ${FIT_SYSTEM:+--system-output "$work/cal$n.json"} --min-size 64K \
    --max-size "$fit_to" --fit-from "$fit_from" --iterations "$iter" --warmup 2 > "$work/cal$n.txt"
  read -r wall rss < "$work/time"
  echo "calibration on $n processes: ${wall} s, peak RSS of mpirun's process tree root $((rss / 1024)) MB"
  grep -v '^measured\|^point\|^all_\|^reduce_' "$work/cal$n.txt"
  use_cal "$n"
}
# use_cal N: the fitted values of the calibration on N processes.
use_cal() {
  local n=$1
  sys=$base_sys
  if [ -n "${FIT_SYSTEM:-}" ]; then sys=$work/cal$n.json; fi
  bw=$(sed -n 's/^bandwidth: \[ *\([^] ]*\).*/\1/p' "$work/cal$n.yml")
  lat=$(sed -n 's/^latency: \[ *\([^] ]*\).*/\1/p' "$work/cal$n.yml")
  topo=$(sed -n 's/^topology: \[ *\([^] ]*\).*/\1/p' "$work/cal$n.yml")
}
calibrate "$np"
grep "^measured\\|^point\\|^all_\\|^reduce_" "$work/cal$np.txt"

printf '\n%-8s %-15s %5s %10s %12s %12s %8s %s\n' set collective ranks bytes replay_us sim_us error floor
measure() { # set coll ranks bytes prefix
  local set=$1 coll=$2 n=$3 bytes=$4 prefix=$5
  printf 'topology: [ %s ]\nnpus_count: [ %s ]\nbandwidth: [ %s ]\nlatency: [ %s ]\n' "$topo" "$n" "$bw" "$lat" > "$work/net$n.yml"
  mpirun --oversubscribe -np "$n" "$chakra" replay "$prefix" --compute skip --iterations "$iter" --warmup 2 -q \
    --report "$work/replay.json" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  "$chakra" sim -q --workload-configuration="$prefix" --system-configuration=$sys \
    --network-configuration="$work/net$n.yml" --report "$work/sim.json" >/dev/null
  /usr/bin/python3 - "$set" "$coll" "$n" "$bytes" "$work/replay.json" "$work/sim.json" <<'PY'
import json, sys
s, coll, n, b, rep, sim = sys.argv[1:7]
m = json.load(open(rep))["replay"]["makespan_median_ns"]
p = json.load(open(sim))["max_finish_ns"]
err = 100.0 * (p - m) / m
floor = ("ok" if abs(err) <= 25 else "MISSED") if int(b) >= 1 << 20 else "-"
print("%-8s %-15s %5s %10s %12.1f %12.1f %+7.1f%% %s" % (s, coll, n, b, m / 1e3, p / 1e3, err, floor))
PY
}
sizes_n="4"
[ $all = 1 ] && sizes_n="4 8 16"
if [ -d "$shared" ]; then
  for n in $sizes_n; do
    [ "$n" = "$np" ] || calibrate "$n"  # the job size is part of what is measured
    for coll in all_reduce all_gather reduce_scatter all_to_all; do
      measure shared $coll "$n" 1048576 "$shared/$coll/${n}npus_1MB/$coll"
    done
  done
else
  echo "($shared absent: the shared microbenchmarks are skipped)"
fi
use_cal "$np"
for coll in all_reduce all_gather reduce_scatter all_to_all; do
  for size in 65536 262144 1048576 4194304 16777216; do
    "$chakra" gen microbench --coll $coll --npus "$np" --size $size -o "$work/m" >/dev/null
    measure sizes $coll "$np" $size "$work/m"
  done
done
