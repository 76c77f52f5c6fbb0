#!/usr/bin/env bash
# Whole commands timed with two chakra binaries, alternated run by run so
# both see the same machine load: the writing paths (synth of 1,024 ranks,
# default and --stage-compat, a MoE job, coll gen / from-msccl / expand of
# large jobs, convert pytorch and text, pack) and the ingestion paths (link,
# convert of a linked trace). For each: the fastest wall time and the
# lowest CPU time (user + system) of REPEAT runs (default 5) of each binary,
# and new / old ratios (below 1.00: the new binary is faster). A command
# that fails stops the script. ONLY=REGEX runs the cases whose name matches.
#
#   bench/commands_ab.sh OLD_CHAKRA NEW_CHAKRA
#
# Needs ../shared ($CHAKRA_SHARED) for the ingestion cases; skips them,
# saying so, without it. Scratch in a fresh /tmp folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?usage: bench/commands_ab.sh OLD_CHAKRA NEW_CHAKRA}")
new=$(realpath "${2:?usage: bench/commands_ab.sh OLD_CHAKRA NEW_CHAKRA}")
repeat=${REPEAT:-5}
shared=${CHAKRA_SHARED:-$(realpath ../shared 2>/dev/null || true)}
tr=$shared/data/traces
work=$(mktemp -d /tmp/chakra-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
in=$work/in
mkdir -p "$in"

/usr/bin/python3 tests/coll/msccl_xml.py 128 > "$in/ring128.xml"
"$old" gen microbench --coll all_reduce --npus 1024 --size 1G -o "$in/mb" > /dev/null
awk 'BEGIN { print "DATA"; print 400; for (i = 0; i < 400; i++) printf "l%d -1 5 ALLREDUCE 10 6 ALLTOALL 20 7 ALLREDUCE 100 1\n", i }' \
  > "$in/data.txt"
if [ -d "$tr" ]; then
  /usr/bin/python3 bench/ingest/gen_traces.py --source "$tr/pytorch-host/host_et.1.0.2-chakra.0.0.4.json" --scale 400 \
    --linked -o "$in/linked.json" > /dev/null
  /usr/bin/python3 bench/ingest/gen_traces.py --source "$tr/pytorch-host/host_et.1.0.2-chakra.0.0.4.json" --scale 400 \
    -o "$in/host.json" > /dev/null
  "$old" jsonize "$tr/chakra-real/pytorch_converted.0.et" > "$in/real1.jsonl"
  for _ in $(seq 20); do cat "$in/real1.jsonl"; done > "$in/real.jsonl"
  gzip -dc "$tr/kineto-pair/simple_add.host_et.json.gz" > "$in/pair.host.json"
  gzip -dc "$tr/kineto-pair/simple_add.kineto.json.gz" > "$in/pair.kineto.json"
fi

printf '%-44s %9s %9s %6s %9s %9s %6s\n' command "old wall" "new wall" ratio "old cpu" "new cpu" ratio
echo "load before: $(uptime)"
# run NAME NEEDS_SHARED ARGS...: "@" in ARGS is the binary; outputs go to
# $work/out (emptied before each run).
run() {
  local name=$1 needs=$2
  shift 2
  if [ "$needs" = shared ] && [ ! -d "$tr" ]; then
    echo "skip $name (no shared data)"
    return
  fi
  [[ "$name" =~ ${ONLY:-.} ]] || return 0
  local ow="" nw="" oc="" nc=""
  for _ in $(seq "$repeat"); do
    for side in old new; do
      local bin=$old
      [ "$side" = new ] && bin=$new
      local args=()
      for a in "$@"; do args+=("${a//@/$bin}"); done
      rm -rf "$work/out" && mkdir "$work/out"
      if ! /usr/bin/time -f "%e %U %S" -o "$work/t" "${args[@]}" > /dev/null 2> "$work/err"; then
        echo "$name: failed with $bin:" >&2
        cat "$work/err" >&2
        exit 1
      fi
      local w u s
      read -r w u s < "$work/t"
      local c
      c=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')
      if [ "$side" = old ]; then
        if [ -z "$ow" ] || awk -v a="$w" -v b="$ow" 'BEGIN{exit !(a < b)}'; then ow=$w; fi
        if [ -z "$oc" ] || awk -v a="$c" -v b="$oc" 'BEGIN{exit !(a < b)}'; then oc=$c; fi
      else
        if [ -z "$nw" ] || awk -v a="$w" -v b="$nw" 'BEGIN{exit !(a < b)}'; then nw=$w; fi
        if [ -z "$nc" ] || awk -v a="$c" -v b="$nc" 'BEGIN{exit !(a < b)}'; then nc=$c; fi
      fi
    done
  done
  printf '%-44s %9s %9s %6s %9s %9s %6s\n' "$name" "$ow" "$nw" "$(awk -v a="$nw" -v b="$ow" 'BEGIN{printf "%.2f", a / b}')" \
    "$oc" "$nc" "$(awk -v a="$nc" -v b="$oc" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 1)}')"
}

o=$work/out
run "synth 1024 ranks (32 layers dp32 tp8 pp4)" - @ synth --num-stacks 32 --dp 32 --tp 8 --pp 4 --batch 256 \
  --micro-batch 32 -o "$o/s" -q
run "synth --stage-compat 1024 ranks" - @ synth --stage-compat --num-stacks 32 --dp 32 --tp 8 --pp 4 --batch 256 \
  --micro-batch 32 -o "$o/s" -q
run "synth moe 32 layers dp8 tp4 ep8 pp4" - @ synth --model-type moe --num-stacks 32 --dp 8 --tp 4 --ep 8 --pp 4 \
  --experts 8 --kexperts 2 --batch 64 --micro-batch 8 -o "$o/s" -q
run "coll gen ring allreduce 1024 ranks" - @ coll gen --coll allreduce --algo ring --ranks 1024 --size 1G -o "$o/g"
run "coll from-msccl ring 128" - @ coll from-msccl --size 1G -o "$o/m" "$in/ring128.xml"
run "coll expand microbench 1024 ring" - @ coll expand --algo ring -o "$o/e" "$in/mb"
run "gen microbench 1024" - @ gen microbench --coll all_reduce --npus 1024 --size 1M -o "$o/b"
run "convert text 400 layers 64 npus" - @ convert text --num-npus 64 -o "$o/t" -q "$in/data.txt"
run "convert pytorch host x400" shared @ convert pytorch -o "$o/c.et" -q "$in/host.json"
run "convert pytorch linked x400" shared @ convert pytorch -o "$o/c.et" --log "$o/c.log" -q "$in/linked.json"
run "convert pytorch linked x400 --compat" shared @ convert pytorch --compat -o "$o/c.et" -q "$in/linked.json"
run "link kineto pair" shared @ link --host "$in/pair.host.json" --device "$in/pair.kineto.json" -o "$o/l.json" -q
run "pack chakra-real x20" shared @ pack -o "$o/p.et" "$in/real.jsonl"
echo "load after: $(uptime)"
