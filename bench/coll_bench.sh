#!/usr/bin/env bash
# chakra coll benchmark (issue 11, floors in docs/coll.md):
#  1. MSCCL-IR ring all-reduce XML (tests/coll/msccl_xml.py, instruction
#     fusion off, like msccl-tools' allreduce_a100_ring) at 8..128 ranks ->
#     ETs with `coll from-msccl`: wall time, output bytes, peak RSS, next to
#     the reference converter's published times;
#  2. `coll gen` of a 1,024-rank ring all-reduce: wall time, nodes, nodes/s;
#  3. `coll expand` of a 1,024-rank microbenchmark all-reduce with ring:
#     output nodes per second.
# Each is run REPEAT times (default 3) and the fastest kept; the machine is
# shared, so the fastest is the least disturbed.
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

best() { # out_var cmd... : fastest of $repeat runs -> "wall rss_kb"
  local var=$1 b="" line
  shift
  for _ in $(seq "$repeat"); do
    rm -rf "$work/out" && mkdir -p "$work/out"
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" > /dev/null
    line=$(tail -1 "$work/t")
    if [ -z "$b" ] || awk -v a="${line%% *}" -v c="${b%% *}" 'BEGIN{exit !(a < c)}'; then b=$line; fi
  done
  printf -v "$var" '%s' "$b"
}

echo "MSCCL-IR XML -> ETs (ring all-reduce, no fusion, --size 1 GiB)"
printf '%6s %10s %10s %12s %10s   %s\n' ranks xml_MB wall_s output_MB rss_MB "reference 2025-04 / HEAD / paper (s)"
declare -A ref=([8]="0.20 / 0.20 / -" [16]="0.27 / 0.36 / 0.259" [32]="0.55 / 0.80 / 0.398" [64]="2.02 / 3.27 / 1.485" [128]="6.96 / 9.09 / 7.662")
for n in 8 16 32 64 128; do
  /usr/bin/python3 tests/coll/msccl_xml.py "$n" > "$work/ring$n.xml"
  best r "$chakra" coll from-msccl "$work/ring$n.xml" --size 1G -o "$work/out/r"
  "$chakra" coll from-msccl "$work/ring$n.xml" --size 1G -o "$work/out/r"
  bytes=$(cat "$work"/out/r.*.et | wc -c)
  printf '%6d %10.2f %10s %12.2f %10.1f   %s\n' "$n" "$(echo "$(stat -c %s "$work/ring$n.xml") / 1000000" | bc -l)" \
    "${r%% *}" "$(echo "$bytes / 1000000" | bc -l)" "$(echo "${r##* } / 1024" | bc -l)" "${ref[$n]}"
done

echo
echo "coll gen / expand, 1,024 ranks, ring all-reduce, 1 GiB"
printf '%-44s %8s %12s %12s %10s\n' operation wall_s nodes nodes/s rss_MB
best g "$chakra" coll gen --coll allreduce --algo ring --ranks 1024 --size 1G -o "$work/out/g"
"$chakra" coll gen --coll allreduce --algo ring --ranks 1024 --size 1G -o "$work/out/g"
nodes=$((1024 * (5 * 1023)))
printf '%-44s %8s %12d %12.0f %10.1f\n' "gen (reduce-bw 50: 5 nodes per step pair)" "${g%% *}" "$nodes" \
  "$(echo "$nodes / ${g%% *}" | bc -l)" "$(echo "${g##* } / 1024" | bc -l)"
best g0 "$chakra" coll gen --coll allreduce --algo ring --ranks 1024 --size 1G --reduce-bw 0 -o "$work/out/g"
nodes0=$((1024 * (4 * 1023)))
printf '%-44s %8s %12d %12.0f %10.1f\n' "gen --reduce-bw 0 (sends and receives only)" "${g0%% *}" "$nodes0" \
  "$(echo "$nodes0 / ${g0%% *}" | bc -l)" "$(echo "${g0##* } / 1024" | bc -l)"
"$chakra" gen microbench --coll all_reduce --npus 1024 --size 1G -o "$work/mb"
best x "$chakra" coll expand "$work/mb" -o "$work/out/x" --algo ring
printf '%-44s %8s %12d %12.0f %10.1f\n' "expand microbench all-reduce with ring" "${x%% *}" "$nodes" \
  "$(echo "$nodes / ${x%% *}" | bc -l)" "$(echo "${x##* } / 1024" | bc -l)"
echo
echo "floors: 128-rank XML <= 0.1 s and <= 10 MB; gen 1,024 ranks <= 1 s; expand >= 1M nodes/s"
