#!/usr/bin/env bash
# The node encoder through each writing path (bench/encbench.c), this build
# against a baseline build, alternated run by run so that both see the same
# machine load; the fastest of REPEAT runs (default 5) of each is kept.
#
#   bench/encoder_bench.sh BASE_BUILD [BUILD=build] [MILLIONS=20]
#
# BASE_BUILD is a build directory of the tree to compare with, holding an
# encbench built from this same bench/encbench.c (git archive of the old
# commit with this bench/ copied in). Prints, per path, nodes per second and
# peak RSS of both and the ratio new / base (above 1.00: faster).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/encoder_bench.sh BASE_BUILD [BUILD] [MILLIONS]}
new=${2:-build}
millions=${3:-20}
repeat=${REPEAT:-5}
for b in "$base" "$new"; do
  [ -x "$b/bin/encbench" ] || { echo "no $b/bin/encbench: build the encbench target" >&2; exit 2; }
done

field() { sed -E "s/.* $1=([^ ]+).*/\1/" <<< "$2"; }

echo "load before: $(uptime)"
printf '%-8s %10s %14s %14s %8s %10s %10s %9s %9s\n' path nodes "base nodes/s" "new nodes/s" ratio \
  "base cpu s" "new cpu s" "base KiB" "new KiB"
for path in coll synth builder writer; do
  bw="" nw="" bl="" nl=""
  for _ in $(seq "$repeat"); do
    for side in base new; do
      dir=$base
      [ "$side" = new ] && dir=$new
      line=$("$dir/bin/encbench" "$path" "$millions")
      w=$(field wall_s "$line")
      if [ "$side" = base ]; then
        if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN{exit !(a < b)}'; then bw=$w bl=$line; fi
      else
        if [ -z "$nw" ] || awk -v a="$w" -v b="$nw" 'BEGIN{exit !(a < b)}'; then nw=$w nl=$line; fi
      fi
    done
  done
  printf '%-8s %10s %14s %14s %8s %10s %10s %9s %9s\n' "$path" "$(field nodes "$nl")" "$(field nodes_per_s "$bl")" \
    "$(field nodes_per_s "$nl")" "$(awk -v a="$bw" -v b="$nw" 'BEGIN{printf "%.2f", a / b}')" \
    "$(field cpu_s "$bl")" "$(field cpu_s "$nl")" "$(field maxrss_kb "$bl")" "$(field maxrss_kb "$nl")"
done
echo "load after: $(uptime)"
