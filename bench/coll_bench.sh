#!/usr/bin/env bash
# chakra coll benchmark (issue 11, floors in docs/coll.md):
#  1. MSCCL-IR ring all-reduce XML (tests/coll/msccl_xml.py, instruction
#     fusion off, like msccl-tools' allreduce_a100_ring) at 8..128 ranks ->
#     ETs with `coll from-msccl`: wall time, output bytes, peak RSS, next to
#     the reference converter's published times;
#  2. `coll gen` of a 1,024-rank ring all-reduce: wall time, nodes, nodes/s;
#  3. `coll expand` of a 1,024-rank microbenchmark all-reduce with ring:
#     output nodes per second.
# Each is run REPEAT times (default 3): every wall time is printed, and the
# fastest run's wall, CPU (user + system) and peak RSS are kept, with its
# ratio to the floor (floor / wall: 1.00 or more meets it) and to the
# reference. The machine is shared: the load (uptime) is printed before
# and after, and CPU time is the figure least disturbed by other jobs.
#
# usage: bench/coll_bench.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
chakra=$build/bin/chakra
repeat=${REPEAT:-3}
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
work=$(mktemp -d /tmp/chakra-coll-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# best VAR cmd...: runs cmd $repeat times; VAR = "wall cpu rss_kb all_walls"
# of the fastest run (all_walls: every run's wall, comma-separated).
best() {
  local var=$1 b="" all="" line w u s m
  shift
  for _ in $(seq "$repeat"); do
    rm -rf "$work/out" && mkdir -p "$work/out"
    /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" > /dev/null
    read -r w u s m < <(tail -1 "$work/t")
    all=${all:+$all,}$w
    line="$w $(echo "$u + $s" | bc -l | awk '{printf "%.2f", $1}') $m"
    if [ -z "$b" ] || awk -v a="$w" -v c="${b%% *}" 'BEGIN{exit !(a < c)}'; then b=$line; fi
  done
  printf -v "$var" '%s %s' "$b" "$all"
}
f() { echo "$@" | awk '{print $'"$2"'}' ; }              # field N of a best() result
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "load before: $(uptime)"
echo
echo "MSCCL-IR XML -> ETs (ring all-reduce, no fusion, --size 1 GiB); floor at 128 ranks: 0.1 s, 10 MB"
printf '%6s %8s %8s %8s %10s %8s %12s %9s  %-22s %s\n' ranks xml_MB wall_s cpu_s output_MB rss_MB "floor/wall" "ref/wall" "runs (s)" \
  "reference 2025-04 / HEAD / paper (s)"
declare -A ref=([8]="0.20 / 0.20 / -" [16]="0.27 / 0.36 / 0.259" [32]="0.55 / 0.80 / 0.398" [64]="2.02 / 3.27 / 1.485" [128]="6.96 / 9.09 / 7.662")
for n in 8 16 32 64 128; do
  /usr/bin/python3 tests/coll/msccl_xml.py "$n" > "$work/ring$n.xml"
  best r "$chakra" coll from-msccl "$work/ring$n.xml" --size 1G -o "$work/out/r"
  "$chakra" coll from-msccl "$work/ring$n.xml" --size 1G -o "$work/out/r"
  bytes=$(cat "$work"/out/r.*.et | wc -c)
  wall=$(f "$r" 1)
  fl=$([ "$n" = 128 ] && ratio 0.1 "$wall" || echo "-")
  printf '%6d %8.2f %8s %8s %10.2f %8.1f %12s %9s  %-22s %s\n' "$n" "$(echo "$(stat -c %s "$work/ring$n.xml") / 1000000" | bc -l)" \
    "$wall" "$(f "$r" 2)" "$(echo "$bytes / 1000000" | bc -l)" "$(echo "$(f "$r" 3) / 1024" | bc -l)" "$fl" \
    "$(ratio "${ref[$n]%% *}" "$wall")" "$(f "$r" 4)" "${ref[$n]}"
done

echo
echo "coll gen / expand, 1,024 ranks, ring all-reduce, 1 GiB; floors: gen <= 1 s, expand >= 1M output nodes/s"
printf '%-44s %7s %7s %9s %11s %8s %10s  %s\n' operation wall_s cpu_s nodes nodes/s rss_MB floor_ratio "runs (s)"
row() { # label result nodes floor_ratio
  printf '%-44s %7s %7s %9d %11.0f %8.1f %10s  %s\n' "$1" "$(f "$2" 1)" "$(f "$2" 2)" "$3" \
    "$(echo "$3 / $(f "$2" 1)" | bc -l)" "$(echo "$(f "$2" 3) / 1024" | bc -l)" "$4" "$(f "$2" 4)"
}
nodes=$((1024 * (5 * 1023)))
best g "$chakra" coll gen --coll allreduce --algo ring --ranks 1024 --size 1G -o "$work/out/g"
row "gen (reduce-bw 50: 5 nodes per step pair)" "$g" "$nodes" "$(ratio 1 "$(f "$g" 1)")"
best g1 "$chakra" coll gen --coll allreduce --algo ring --ranks 1024 --size 1G --threads 1 -o "$work/out/g"
row "gen --threads 1" "$g1" "$nodes" "$(ratio 1 "$(f "$g1" 1)")"
nodes0=$((1024 * (4 * 1023)))
best g0 "$chakra" coll gen --coll allreduce --algo ring --ranks 1024 --size 1G --reduce-bw 0 -o "$work/out/g"
row "gen --reduce-bw 0 (sends and receives only)" "$g0" "$nodes0" "-"
"$chakra" gen microbench --coll all_reduce --npus 1024 --size 1G -o "$work/mb"
best x "$chakra" coll expand "$work/mb" -o "$work/out/x" --algo ring
xr=$(awk -v n="$nodes" -v w="$(f "$x" 1)" 'BEGIN{printf "%.2f", n / w / 1e6}')
row "expand microbench all-reduce with ring" "$x" "$nodes" "$xr"
echo
echo "load after: $(uptime)"
