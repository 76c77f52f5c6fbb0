#!/usr/bin/env bash
# run.sh - times `chakra convert pytorch` on the shared host ET replicated
# x10, x100 and x1000 (and a linked variant with GPU and NCCL kernels), as
# the reference converter was measured (spec pytorch-ingest.md 4.5), and
# prints wall time, CPU time, peak RSS and the per-node figures next to the
# reference's.
#
#   bench/ingest/run.sh --chakra BUILD/bin/chakra --bench BUILD/bin/ingest_bench
#
# Environment (optional): CHAKRA_SHARED (default ../shared next to the repo),
# WORK (scratch directory; default a new /tmp/chakra-ingest-bench.XXXXXX,
# removed at the end unless KEEP=1), RUNS (runs per input, median reported;
# default 5), SCALES (default "10 100 1000"), THREADS (--threads; default:
# all CPUs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
chakra= bench=
while [ $# -gt 0 ]; do
  case $1 in
    --chakra) chakra=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    *) echo "usage: $0 --chakra PATH --bench PATH" >&2; exit 2 ;;
  esac
done
[ -x "$chakra" ] && [ -x "$bench" ] || { echo "$0: --chakra and --bench must name the built programs" >&2; exit 2; }
shared=${CHAKRA_SHARED:-$root/../shared}
src=$shared/data/traces/pytorch-host/host_et.1.0.2-chakra.0.0.4.json
[ -f "$src" ] || { echo "$0: $src not found (set CHAKRA_SHARED)" >&2; exit 2; }
runs=${RUNS:-5}
scales=${SCALES:-"10 100 1000"}
threads=${THREADS:+--threads $THREADS}
work=${WORK:-$(mktemp -d /tmp/chakra-ingest-bench.XXXXXX)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
gen="/usr/bin/python3 $root/bench/ingest/gen_traces.py --source $src"

echo "chakra convert pytorch: median of $runs runs per input ($(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "reference (spec 4.5, CPU s without log / peak RSS): x10 0.25 s 41 MiB, x100 2.83 s 248 MiB,"
echo "  x1000 28.9 s 2286 MiB (110 us and 9 KiB per node), linked x1000 34.0 s 2635 MiB"
echo "floors: <= 2.2 us/node, <= 900 B/node"
echo
for k in $scales; do
  for kind in host linked; do
    in=$work/${kind}_x$k.json
    if [ $kind = host ]; then $gen --scale "$k" -o "$in" >/dev/null; n=$((k * 261 + 2))
    else $gen --scale "$k" --linked -o "$in" >/dev/null; n=$((k * 301 + 2)); fi
    # one warm-up run brings the input into the page cache
    "$chakra" convert pytorch "$in" -o "$work/out.et" -q $threads
    case $kind-$k in  # the reference's CPU seconds (no log) and peak MiB, spec 4.5
      host-10) ref="--ref 0.25 41" ;; host-100) ref="--ref 2.83 248" ;; host-1000) ref="--ref 28.9 2286" ;;
      linked-1000) ref="--ref 34.0 2635" ;; *) ref= ;;
    esac
    "$bench" -r "$runs" -n "$n" -l "${kind} x$k" $ref -- "$chakra" convert pytorch "$in" -o "$work/out.et" -q $threads
    rm -f "$in"
  done
done
