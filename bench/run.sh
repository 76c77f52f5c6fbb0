#!/usr/bin/env bash
# run.sh - builds the benchmark inputs and times the format layer on them.
#
#   bench/run.sh                  full run (about 6 GB in /tmp, ~3 minutes)
#   QUICK=1 bench/run.sh          100k real nodes, 1M small nodes
#
# Environment (all optional):
#   BUILD_DIR     build directory (default: build, relative to the repo)
#   CHAKRA_SHARED the shared folder (default: ../shared next to the repo);
#                 without it the real-trace part is skipped
#   WORK          scratch directory (default: a new /tmp/chakra-bench.XXXXXX,
#                 removed at the end unless KEEP=1)
#   REAL_NODES    nodes of the replicated real trace (default 1000000)
#   SMALL_NODES   small collective nodes, large input (default 10000000)
#   SMALL_NODES_2 small collective nodes, the second size for the RSS
#                 comparison (default 1000000)
#   REPEAT        runs per operation; the fastest is reported (default 3)
#   BASELINE_BUILD another build directory holding an etbench (e.g. of the
#                 previous commit, bench/ copied in): each operation then
#                 alternates between the two builds and the table gains
#                 the baseline's time, its RSS and the speed-up
#
# Every operation runs in its own process (bench/etbench.c), so the peak
# RSS column is that operation's alone. Rates use wall time; MB = 10^6 B.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
shared=${CHAKRA_SHARED:-$root/../shared}
real_src=$shared/data/traces/chakra-real/pytorch_converted.0.et
if [ -n "${QUICK:-}" ]; then
  REAL_NODES=${REAL_NODES:-100000}
  SMALL_NODES=${SMALL_NODES:-1000000}
  SMALL_NODES_2=${SMALL_NODES_2:-100000}
fi
real_nodes=${REAL_NODES:-1000000}
small_nodes=${SMALL_NODES:-10000000}
small_nodes_2=${SMALL_NODES_2:-1000000}
repeat=${REPEAT:-3}

echo "== build ($build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target etgen etbench -j"$(nproc)" >/dev/null
etgen=$build/bin/etgen
etbench=$build/bin/etbench
base_etbench=
if [ -n "${BASELINE_BUILD:-}" ]; then
  base_etbench=$BASELINE_BUILD/bin/etbench
  [ -x "$base_etbench" ] || { echo "run.sh: no $base_etbench (build its etbench first)" >&2; exit 1; }
fi

if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d /tmp/chakra-bench.XXXXXX)
  [ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
results=$WORK/results.txt
: >"$results"

# One operation, REPEAT times, alternating with the baseline build when
# there is one (so both see the same machine); keeps each build's fastest
# run, with the largest RSS seen.
bench() {
  local label=$1 op=$2
  shift 2
  local builds=new
  [ -n "$base_etbench" ] && builds="base new"
  local b k line r
  declare -A best=() rss=()
  for ((k = 0; k < repeat; k++)); do
    for b in $builds; do
      case $op in jsonize-file | pack) sync ;; esac # dirty pages of earlier runs
      local exe=$etbench
      [ "$b" = base ] && exe=$base_etbench
      line=$("$exe" "${op%-*}" "$@") || { echo "etbench ($b) $op $* failed" >&2; exit 1; }
      r=$(sed 's/.*maxrss_kb=\([0-9]*\).*/\1/' <<<"$line")
      ((r > ${rss[$b]:-0})) && rss[$b]=$r
      if [ -z "${best[$b]:-}" ] || awk -v a="$line" -v b="${best[$b]}" 'BEGIN {
          split(a, x, "wall_s="); split(b, y, "wall_s="); exit !(x[2] + 0 < y[2] + 0) }'; then
        best[$b]=$line
      fi
    done
  done
  for b in $builds; do
    line=$(sed "s/maxrss_kb=[0-9]*/maxrss_kb=${rss[$b]}/; s/^op=[^ ]*/op=$op/" <<<"${best[$b]}")
    echo "build=$b input=$label $line" >>"$results"
  done
  printf '   %-13s %-13s done\n' "$label" "$op"
}

run_input() {
  local label=$1 et=$2
  bench "$label" raw "$et"
  bench "$label" iterate "$et"
  bench "$label" jsonize-null "$et" -
  bench "$label" jsonize-file "$et" "$WORK/out.json"
  bench "$label" pack "$WORK/out.json" "$WORK/back.et"
  if ! cmp -s "$et" "$WORK/back.et"; then
    echo "run.sh: $label: jsonize | pack did not give the input back" >&2
    exit 1
  fi
  rm -f "$WORK/out.json" "$WORK/back.et"
  bench "$label" graph "$et"
}

echo "== inputs and runs in $WORK (best of $repeat)"
if [ -f "$real_src" ]; then
  "$etgen" replicate "$real_src" "$WORK/real.et" "$real_nodes" && sync
  run_input "real" "$WORK/real.et"
  rm -f "$WORK/real.et"
else
  echo "run.sh: $real_src not found (set CHAKRA_SHARED); real-trace part skipped"
fi
"$etgen" small "$WORK/small.et" "$small_nodes" && sync
run_input "small" "$WORK/small.et"
rm -f "$WORK/small.et"
"$etgen" small "$WORK/small2.et" "$small_nodes_2" && sync
bench "small-$small_nodes_2" iterate "$WORK/small2.et"
bench "small-$small_nodes_2" graph "$WORK/small2.et"
rm -f "$WORK/small2.et"

echo
echo "== results ($(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo))"
awk '
function get(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
BEGIN {
  printf "%-13s %-13s %10s %9s %8s %9s %9s %8s %8s", "input", "operation", "nodes", "MB in",
         "wall s", "MB/s", "Mnode/s", "us/node", "RSS MiB"
}
get("build") == "base" { key = get("input") " " get("op"); base_t[key] = get("wall_s"); base_r[key] = get("maxrss_kb"); has_base = 1; next }
{ rows[++nrows] = $0 }
END {
  if (has_base) printf " %9s %8s %7s", "base us/n", "base RSS", "speedup"
  printf "  %s\n", "notes"
  for (i = 1; i <= nrows; i++) {
    $0 = rows[i]
    n = get("nodes"); inb = get("in_bytes"); outb = get("out_bytes"); t = get("wall_s")
    note = ""
    if (outb > 0) note = sprintf("out %.1f MB (%.0f MB/s)", outb / 1e6, outb / 1e6 / t)
    if (get("op") == "graph") {
      gb = get("graph_bytes"); de = get("dep_entries")
      note = sprintf("graph %.1f B/node, %.1f B/node without dep lists (%.1f deps/node)",
                     gb / n, (gb - 4 * de) / n, de / 2 / n)
      if (get("problems") > 0) note = note sprintf("; %d problem(s)", get("problems"))
    }
    printf "%-13s %-13s %10d %9.1f %8.3f %9.0f %9.2f %8.3f %8.1f", get("input"), get("op"), n,
           inb / 1e6, t, inb / 1e6 / t, n / t / 1e6, t * 1e6 / n, get("maxrss_kb") / 1024
    key = get("input") " " get("op")
    if (has_base) {
      if (key in base_t)
        printf " %9.3f %8.1f %6.2fx", base_t[key] * 1e6 / n, base_r[key] / 1024, base_t[key] / t
      else
        printf " %9s %8s %7s", "-", "-", "-"
    }
    printf "  %s\n", note
  }
}' "$results"
