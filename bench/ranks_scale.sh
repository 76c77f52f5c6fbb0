#!/usr/bin/env bash
# Growth with the rank count (issue 23 item 5): the 32-layer GPT (dp x tp 8
# x pp 16, 1F1B, 8 micro-batches, the issue's headline job at dp 256) at
# 1,024 to 32,768 ranks, each command a whole process: synth (per-rank and
# --shared), coll expand --algo ring of both forms, validate and stats of
# the per-rank files. Prints wall time, CPU (user + system) time, peak RSS
# and bytes written per step; CPU and RSS per rank should stay flat (wall
# time on a shared machine also counts waiting for a core). The ring's
# own output grows with dp (2 (dp - 1) messages per all-reduce), so the
# expansion's bytes per rank grow too: compare its CPU per byte.
# Step byclass (docs/validate.md "Numbers"): a Llama-70B shared set, dp
# ranks/32 x tp 8 x pp 4 (global batch 8 dp, micro-batch dp), checked by
# `chakra validate -q` by class and, up to PER_RANK_MAX ranks, --per-rank.
#
# usage: bench/ranks_scale.sh [BUILD_DIR=build]
#   SIZES="1024 2048 4096 8192 16384 32768"  rank counts (multiples of 128)
#   STEPS="synth expand validate stats byclass"  which steps (synth runs with any
#                                             of the first four: they read its files)
#   PER_RANK_MAX=4096                         byclass: largest set also checked --per-rank
#                                             (2.7 GB at 4,096; 32,768 does not fit in 23 GB)
#   WORK=/path                                scratch (default: a fresh /tmp dir; 32k needs ~25 GB)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
chakra=$(realpath "$build/bin/chakra")
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
sizes=${SIZES:-"1024 2048 4096 8192 16384 32768"}
steps=${STEPS:-"synth expand validate stats byclass"}
per_rank_max=${PER_RANK_MAX:-4096}
work=${WORK:-$(mktemp -d /tmp/chakra-ranks-scale.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"/p.* "$work"/s.* "$work"/l.* "$work"/xp.* "$work"/xs.* "$work"/time "$work"/log' EXIT

printf '%-22s %6s %8s %8s %9s %9s %11s %10s\n' step ranks wall_s cpu_s rss_MB written_MB cpu_us/rank rss_KB/rank
# step ranks files...: runs the rest of the line, then sizes the files named by the glob in $out
step() {
  local name=$1 ranks=$2 out=$3
  shift 3
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
  read -r wall user sys rss < "$work/time"
  local bytes=0
  [ -n "$out" ] && bytes=$(cd "$work" && du -cb $out 2>/dev/null | tail -1 | cut -f1)
  awk -v n="$name" -v r="$ranks" -v w="$wall" -v u="$user" -v y="$sys" -v k="$rss" -v b="$bytes" \
    'BEGIN { printf "%-22s %6d %8.2f %8.2f %9.1f %10.1f %11.1f %10.2f\n", n, r, w, u + y, k / 1024, b / 1e6, (u + y) * 1e6 / r, k / r }'
}
has() { [[ " $steps " == *" $1 "* ]]; }

for n in $sizes; do
  dp=$((n / 128))
  job="--num-stacks 32 --dp $dp --tp 8 --pp 16 --batch $((8 * dp)) --micro-batch $dp"
  cd "$work"
  if has synth || has expand || has validate || has stats; then
    step "synth" "$n" "p.*" "$chakra" synth $job -o p
    step "synth --shared" "$n" "s.*" "$chakra" synth --shared $job -o s
  fi
  if has expand; then
    step "coll expand ring" "$n" "xp.*" "$chakra" coll expand --algo ring -o xp p
    rm -f xp.*
    step "coll expand ring (sh)" "$n" "xs.*" "$chakra" coll expand --algo ring -o xs s
    rm -f xs.*
  fi
  if has validate; then step "validate" "$n" "" "$chakra" validate p; fi
  if has stats; then step "stats --no-checks" "$n" "" "$chakra" stats --no-checks p; fi
  if has byclass; then
    ldp=$((n / 32))
    step "synth --shared llama" "$n" "l.*" "$chakra" synth --shared --model-type llama --dp $ldp --tp 8 --pp 4 \
      --batch $((8 * ldp)) --micro-batch $ldp -o l
    step "validate by class" "$n" "" "$chakra" validate -q l
    if [ "$n" -le "$per_rank_max" ]; then step "validate --per-rank" "$n" "" "$chakra" validate -q --per-rank l; fi
    rm -f l.*
  fi
  rm -f p.* s.*
  cd - > /dev/null
done
