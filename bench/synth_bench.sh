#!/usr/bin/env bash
# chakra synth benchmark: every configuration of STAGE's speed table
# (synthesis spec, section 8) plus 1,024-rank GPT and MoE runs and a
# 128-rank MoE run (STAGE's table has only the small MoE), each as a whole
# process: wall time, peak RSS, output bytes and nodes, next to STAGE's
# measured wall time and RSS (2-core VM, Python 3.11 + sympy).
# CPU = user + system seconds: on a shared machine wall time also counts
# waiting for a core. Each case runs in our default mode and with --stage-compat (STAGE's
# output, which carries the long inputs/outputs attributes).
#
# usage: bench/synth_bench.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
chakra=$build/bin/chakra
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
work=$(mktemp -d /tmp/chakra-synth-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

small="--dmodel 1024 --dff 4096 --head 16 --kvhead 16 --seq 512 --dvocal 32000 --num-stacks 4"
large="--batch 64 --micro-batch 8"

printf '%-40s %-7s %6s %8s %7s %8s %10s %9s   %s\n' case mode ranks wall_s cpu_s rss_MB output_MB nodes "STAGE (wall s, RSS MB)"
run() { # name stage-figures mode options...
  local name=$1 ref=$2 mode=$3
  shift 3
  local extra=""
  [ "$mode" = compat ] && extra="--stage-compat"
  rm -rf "$work/out" && mkdir "$work/out"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$chakra" synth $extra -o "$work/out/w" "$@" > "$work/log"
  read -r wall user sys rss < "$work/time"
  local bytes nodes ranks
  bytes=$(sed -E 's/.* ([0-9]+) bytes.*/\1/' "$work/log")
  nodes=$(sed -E 's/.*\), ([0-9]+) nodes.*/\1/' "$work/log")
  ranks=$(sed -E 's/^wrote ([0-9]+) .*/\1/' "$work/log")
  awk -v n="$name" -v m="$mode" -v r="$ranks" -v w="$wall" -v u="$user" -v y="$sys" -v k="$rss" -v b="$bytes" -v c="$nodes" -v s="$ref" \
    'BEGIN { printf "%-40s %-7s %6s %8.2f %7.2f %8.1f %10.1f %9s   %s\n", n, m, r, w, u + y, k / 1024, b / 1e6, c, s }'
}

for mode in ours compat; do
  run "gpt small dp2 tp2 pp2 (4 micro-batches)" "7.5, 112" $mode $small --dp 2 --tp 2 --pp 2 --batch 8 --micro-batch 2
  run "gpt small fsdp dp4 tp2" "7.1, 111" $mode $small --dp 4 --tp 2 --weight-sharded 1 --batch 8 --micro-batch 4
  run "gpt small dp2 tp2 sp2" "7.9, 110" $mode $small --dp 2 --tp 2 --sp 2 --batch 8 --micro-batch 4
  run "gpt small TP-only dp2 tp4" "4.2, 109" $mode $small --dp 2 --tp 4 --tpsp 0 --batch 4 --micro-batch 4
  run "llama mixed precision dp2 tp2 pp2 kvhead 4" "7.7, 111" $mode --model-type llama --mixed-precision 1 \
    $small --kvhead 4 --dp 2 --tp 2 --pp 2 --batch 8 --micro-batch 4
  run "gpt large 16 layers dp4 tp4 pp4" "64.5, 142" $mode --num-stacks 16 --dp 4 --tp 4 --pp 4 $large
  run "gpt large 32 layers dp4 tp8 pp4" "140.9, 178" $mode --num-stacks 32 --dp 4 --tp 8 --pp 4 $large
  run "gpt large 32 layers dp32 tp8 pp4" "-" $mode --num-stacks 32 --dp 32 --tp 8 --pp 4 --batch 256 --micro-batch 32
  run "moe small dp2 tp2 ep2 (4 experts, k 2)" "15.3, 115" $mode --model-type moe $small --dp 2 --tp 2 --ep 2 \
    --experts 4 --kexperts 2 --batch 8 --micro-batch 4
  run "moe large 32 layers dp2 tp8 ep2 pp4 (8 exp)" "-" $mode --model-type moe --num-stacks 32 --dp 2 --tp 8 --ep 2 \
    --pp 4 --experts 8 --kexperts 2 $large
  run "moe large 32 layers dp8 tp4 ep8 pp4 (8 exp)" "-" $mode --model-type moe --num-stacks 32 --dp 8 --tp 4 --ep 8 \
    --pp 4 --experts 8 --kexperts 2 $large
done
