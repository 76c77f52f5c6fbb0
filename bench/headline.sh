#!/usr/bin/env bash
# The headline pipeline (issue 23 item 6): one training iteration of the
# 32-layer GPT (1F1B, 8 micro-batches; dp x tp 8 x pp 16, and the
# 1,048,576-rank job as dp 32,768 x tp 8 x pp 4) synthesised in the shared
# form, its collectives expanded into sends and receives with the ring
# (coll expand, per class), and simulated (congestion-unaware model, a 3-D
# network: Switch over dp, FullyConnected over tp, Ring over pp). Each
# command is a whole process; for each it prints wall time, CPU (user +
# system) time, peak RSS, bytes written and the simulator's symmetry line,
# then the pipeline's total. The same job unexpanded is simulated too (the
# shared set as synth writes it), and at PER_RANK ranks as standard
# per-rank files with --symmetry=auto and --symmetry=off. docs/scale.md
# records the numbers and explains them.
#
# usage: bench/headline.sh [BUILD_DIR=build]
#   SIZES="1024 8192 32768 1048576"   rank counts (multiples of 128; 1048576 is the pp 4 job)
#   PER_RANK=32768                    the size also run as per-rank files ("" for none)
#   EXPANDED_SIM_MAX=8192             largest size whose expanded set is simulated: an expanded
#                                     ring is not a symmetry of the run (docs/scale.md), so its
#                                     simulation runs every NPU (32,768 ranks: ~230 M nodes)
#   WORK=/path                        scratch (default: a fresh /tmp dir; per-rank 32k needs ~3 GB)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
chakra=$(realpath "$build/bin/chakra")
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
sizes=${SIZES:-"1024 8192 32768 1048576"}
per_rank=${PER_RANK-32768}
expanded_max=${EXPANDED_SIM_MAX:-8192}
work=${WORK:-$(mktemp -d /tmp/chakra-headline.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"/p.* "$work"/s.* "$work"/xs.* "$work"/time "$work"/log "$work"/net.yml "$work"/sys.json' EXIT

cat > "$work/sys.json" <<'EOF'
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
 "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring", "ring"],
 "all-gather-implementation": ["ring", "ring", "ring"], "reduce-scatter-implementation": ["ring", "ring", "ring"],
 "all-to-all-implementation": ["ring", "ring", "ring"], "collective-optimization": "localBWAware",
 "local-mem-bw": 1600}
EOF

printf '%-26s %8s %8s %8s %9s %11s  %s\n' step ranks wall_s cpu_s rss_MB written_MB symmetry
tot_wall=0 tot_cpu=0 tot_rss=0 tot_bytes=0
# step NAME RANKS OUTGLOB CMD...: runs CMD, sizes the files OUTGLOB names
step() {
  local name=$1 ranks=$2 out=$3
  shift 3
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
  read -r wall user sys rss < "$work/time"
  local bytes=0 sym
  [ -n "$out" ] && bytes=$(cd "$work" && du -cb $out 2>/dev/null | tail -1 | cut -f1)
  sym=$(sed -n 's/.*symmetry: //p' "$work/log" | head -1)
  awk -v n="$name" -v r="$ranks" -v w="$wall" -v u="$user" -v y="$sys" -v k="$rss" -v b="$bytes" -v s="$sym" \
    'BEGIN { printf "%-26s %8d %8.2f %8.2f %9.1f %11.1f  %s\n", n, r, w, u + y, k / 1024, b / 1e6, s }'
  tot_wall=$(awk -v a="$tot_wall" -v b="$wall" 'BEGIN { print a + b }')
  tot_cpu=$(awk -v a="$tot_cpu" -v b="$user" -v c="$sys" 'BEGIN { print a + b + c }')
  tot_rss=$(awk -v a="$tot_rss" -v b="$rss" 'BEGIN { print (b > a ? b : a) }')
  tot_bytes=$((tot_bytes + bytes))
}
total() {
  awk -v n="$1" -v r="$2" -v w="$tot_wall" -v c="$tot_cpu" -v k="$tot_rss" -v b="$tot_bytes" \
    'BEGIN { printf "%-26s %8d %8.2f %8.2f %9.1f %11.1f  (peak RSS: the largest step)\n", n, r, w, c, k / 1024, b / 1e6 }'
}

for n in $sizes; do
  # Every size's total starts from zero: steps after total() (the shared
  # simulation, the per-rank runs) must not leak into the next size's.
  tot_wall=0 tot_cpu=0 tot_rss=0 tot_bytes=0
  if [ "$n" -eq 1048576 ]; then dp=32768 pp=4; else dp=$((n / 128)) pp=16; fi
  job="--num-stacks 32 --dp $dp --tp 8 --pp $pp --batch $((8 * dp)) --micro-batch $dp"
  printf 'topology: [ Switch, FullyConnected, Ring ]\nnpus_count: [ %d, 8, %d ]\nbandwidth: [ 50, 300, 25 ]\nlatency: [ 1000, 100, 2000 ]\n' \
    "$dp" "$pp" > "$work/net.yml"
  sim=("$chakra" sim -q --summary --system-configuration=sys.json --network-configuration=net.yml --network-model=unaware)
  cd "$work"
  step "synth --shared" "$n" "s.*" "$chakra" synth --shared $job -o s
  step "coll expand ring (shared)" "$n" "xs.*" "$chakra" coll expand --algo ring --system-configuration sys.json -o xs s
  if [ "$n" -le "$expanded_max" ]; then
    step "sim expanded" "$n" "" "${sim[@]}" --workload-configuration=xs
    total "= synth+expand+sim" "$n"
  else
    total "= synth+expand" "$n"
    echo "  (sim expanded: not run above EXPANDED_SIM_MAX=$expanded_max ranks)"
  fi
  step "sim unexpanded (shared)" "$n" "" "${sim[@]}" --workload-configuration=s
  rm -f s.* xs.*
  if [ "$n" = "$per_rank" ]; then
    step "synth (per-rank files)" "$n" "p.*" "$chakra" synth $job -o p
    step "sim --symmetry=auto" "$n" "" "${sim[@]}" --symmetry=auto --workload-configuration=p
    step "sim --symmetry=off" "$n" "" "${sim[@]}" --symmetry=off --workload-configuration=p
    rm -f p.*
  fi
  cd - > /dev/null
done
