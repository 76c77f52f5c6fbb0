#!/usr/bin/env bash
# views.sh - times the view commands on 1,000,000-node traces against the
# floors of issue 14 (dot --collapse, timeline, diff <= 2 s; obfuscate
# >= 1 M nodes/s). Prints wall and CPU (user + system) seconds and peak RSS
# per command; on a shared machine CPU time is the steadier of the two.
#
#   bench/views.sh            (NODES=1000000 by default; BUILD_DIR=build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
nodes=${NODES:-1000000}
cmake --build "$build" --target chakra viewgen -j2 >/dev/null
work=$(mktemp -d /tmp/chakra-views-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
chakra=$build/bin/chakra
"$build/bin/viewgen" "$work/a" 2 "$nodes"
echo "input: viewgen, 2 ranks x $nodes nodes, $(stat -c %s "$work/a.0.et") bytes per rank"
printf '%-40s %8s %8s %9s\n' command "wall s" "CPU s" "RSS MiB"
run() {
  local label=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
    local rc=$?
    [ "$rc" -le 1 ] || { cat "$work/err" >&2; exit 1; }
  }
  read -r s u sy kb < <(tail -n 1 "$work/time")  # time prefixes a line on a non-zero exit
  printf '%-40s %8s %8.2f %9.1f\n' "$label" "$s" "$(echo "$u + $sy" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
}
run "dot --collapse (1 rank)" "$chakra" dot --collapse --max-nodes 0 "$work/a.0.et" -o "$work/a.dot"
if "$chakra" timeline --help >/dev/null 2>&1; then
  run "timeline (1 rank)" "$chakra" timeline "$work/a.0.et" -o "$work/a.json"
fi
if "$chakra" diff --help >/dev/null 2>&1; then
  run "diff (rank 0 vs rank 1)" "$chakra" diff "$work/a.0.et" "$work/a.1.et"
fi
if "$chakra" obfuscate --help >/dev/null 2>&1; then
  run "obfuscate (1 rank)" "$chakra" obfuscate "$work/a.0.et" -o "$work/o.0.et"
fi
