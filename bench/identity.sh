#!/usr/bin/env bash
# Byte-identity gate for refactors of the writing paths: runs one battery of
# commands with two chakra binaries (before and after) and compares the
# SHA-256 of every file each command writes, and its exit status.
#
#   bench/identity.sh OLD_CHAKRA NEW_CHAKRA
#
# The battery: synth (default, --stage-compat, --order stage, MoE, FSDP,
# sequence parallelism, roofline costs, a --ranks subset), coll gen (every
# collective and algorithm), coll from-msccl (the shared XMLs and generated
# ones, --compat, --embed-xml), coll synth, coll expand (generated
# algorithms, --overlap, algorithm ETs of the shared data as a prefix),
# gen microbench, convert pytorch (the shared host ET, the Kineto pair,
# linked traces made by link and by bench/ingest/gen_traces.py, --compat,
# --log, --comm-groups), convert text, link, pack of jsonize's output and
# obfuscate. Inputs come from ../shared/data/traces ($CHAKRA_SHARED) where
# it exists; cases that need it are skipped, and said so, where it does not.
# Prints one line per case; exits 1 if any case differs.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?usage: bench/identity.sh OLD_CHAKRA NEW_CHAKRA}")
new=$(realpath "${2:?usage: bench/identity.sh OLD_CHAKRA NEW_CHAKRA}")
shared=${CHAKRA_SHARED:-$(realpath ../shared 2>/dev/null || true)}
tr=$shared/data/traces
py=/usr/bin/python3
work=$(mktemp -d /tmp/chakra-identity.XXXXXX)
trap 'rm -rf "$work"' EXIT
same=0 differ=0 skipped=0

# Inputs made once, shared by both binaries.
in=$work/in
mkdir -p "$in"
printf 'DATA\n2\nconv1 -1 5 ALLREDUCE 10 6 ALLTOALL 20 7 ALLREDUCE 100 1\nfc -1 8 NONE 0 9 NONE 0 10 ALLGATHER 50 1\n' > "$in/data.txt"
printf 'HYBRID_DLRM\t1\t\t\n4\t\t\nE\t-1\t300\tALLTOALL\t98304\t300\tALLTOALL\t98304\t300\tNONE\t0\t98\nB0\t-1\t1280\tNONE\t0\t794\tNONE\t0\t896\tALLREDUCE\t13312\t13\nT0\t-1\t6400\tNONE\t0\t6400\tNONE\t0\t4480\tALLREDUCE\t1064960\t1065\nT1\t-1\t2560\tNONE\t0\t2560\tNONE\t0\t1792\tALLREDUCE\t524288\t524\n' > "$in/dlrm.txt"
$py tests/coll/msccl_xml.py 16 > "$in/ring16.xml"
$py tests/coll/msccl_xml.py 128 > "$in/ring128.xml" # 7.7 MB: parsed in parts
printf 'a fixed key\n' > "$in/key"
"$old" gen microbench --coll all_reduce --npus 16 --size 1M -o "$in/mb" > /dev/null
# the two-rank job of tests/ingest/e2e_two_ranks.py: NCCL kernels, send/recv,
# a second thread, a stream synchronisation
$py -c "
import json, sys
sys.path.insert(0, 'tests/ingest')
import e2e_two_ranks as e
for r in (0, 1):
    h, k = e.make_rank(r)
    json.dump(h, open('$in/h%d.json' % r, 'w')), json.dump(k, open('$in/k%d.json' % r, 'w'))
"
if [ -d "$tr" ]; then
  $py bench/ingest/gen_traces.py --source "$tr/pytorch-host/host_et.1.0.2-chakra.0.0.4.json" --scale 20 --linked \
    -o "$in/linked20.json"
  $py bench/ingest/gen_traces.py --source "$tr/pytorch-host/host_et.1.0.2-chakra.0.0.4.json" --scale 400 --linked \
    -o "$in/linked400.json" > /dev/null # 107 MB: parsed in parallel segments
  "$old" link --host "$tr/kineto-pair/simple_add.host_et.json.gz" --device "$tr/kineto-pair/simple_add.kineto.json.gz" \
    -o "$in/pair.linked.json" -q
  "$old" jsonize "$tr/chakra-real/pytorch_converted.0.et" > "$in/real.jsonl"
fi

# case NAME NEEDS_SHARED ARGS...: ARGS run in a fresh folder (out/ inside it
# is where outputs go) with each binary; "@" in ARGS is the binary.
case_() {
  local name=$1 needs=$2
  shift 2
  if [ "$needs" = shared ] && [ ! -d "$tr" ]; then
    echo "skip    $name (no shared data)"
    skipped=$((skipped + 1))
    return
  fi
  local sums=()
  for bin in "$old" "$new"; do
    local d=$work/run
    rm -rf "$d" && mkdir -p "$d/out"
    local args=()
    for a in "$@"; do args+=("${a//@/$bin}"); done
    (cd "$d" && "${args[@]}" > /dev/null 2> "$d/stderr")
    local rc=$?
    sums+=("rc=$rc $(cd "$d/out" && find . -type f | LC_ALL=C sort | xargs -r sha256sum | sha256sum | cut -c1-16) \
$(find "$d/out" -type f | wc -l) files")
  done
  if [ "${sums[0]}" = "${sums[1]}" ]; then
    echo "same    $name: ${sums[0]}"
    same=$((same + 1))
  else
    echo "DIFFER  $name: old ${sums[0]}, new ${sums[1]}"
    differ=$((differ + 1))
  fi
}

small="--dmodel 1024 --dff 4096 --head 16 --kvhead 16 --seq 512 --dvocal 32000 --num-stacks 4"
# shellcheck disable=SC2086 # $small is a list of options
{
case_ "synth default dp2 tp2 pp2" - @ synth $small --dp 2 --tp 2 --pp 2 --batch 8 --micro-batch 2 -o out/w -q
case_ "synth --schedule gpipe" - @ synth $small --dp 2 --tp 2 --pp 2 --batch 8 --micro-batch 2 --schedule gpipe -o out/w -q
case_ "synth --order stage" - @ synth $small --dp 2 --tp 2 --pp 2 --batch 8 --micro-batch 2 --order stage -o out/w -q
case_ "synth --stage-compat dp1 tp4 pp2" - @ synth --stage-compat $small --dp 1 --tp 4 --pp 2 --batch 8 --micro-batch 2 -o out/w -q
case_ "synth --stage-compat llama mp" - @ synth --stage-compat --model-type llama --mixed-precision 1 $small --kvhead 4 \
  --dp 4 --tp 2 --batch 8 --micro-batch 4 -o out/w -q
case_ "synth fsdp dp4 tp2" - @ synth $small --dp 4 --tp 2 --weight-sharded 1 --batch 8 --micro-batch 4 -o out/w -q
case_ "synth sp2" - @ synth $small --dp 2 --tp 2 --sp 2 --batch 8 --micro-batch 4 -o out/w -q
case_ "synth --stage-compat sp4" - @ synth --stage-compat $small --dp 1 --tp 2 --sp 4 --batch 8 --micro-batch 4 -o out/w -q
case_ "synth moe" - @ synth --model-type moe $small --dp 2 --tp 2 --ep 2 --experts 4 --kexperts 2 --batch 8 \
  --micro-batch 4 -o out/w -q
case_ "synth moe pp2 --order stage" - @ synth --model-type moe $small --dp 2 --tp 2 --ep 2 --pp 2 --experts 4 \
  --kexperts 2 --batch 8 --micro-batch 4 --order stage -o out/w -q
case_ "synth roofline, recompute" - @ synth $small --dp 2 --tp 2 --pp 2 --batch 8 --micro-batch 2 --peak-tflops 300 \
  --mem-bw 2000 --activation-recompute 1 -o out/w -q
case_ "synth --ranks subset, 1k ranks" - @ synth --num-stacks 8 --dp 32 --tp 8 --pp 4 --batch 256 --micro-batch 32 \
  --ranks 0-3,500,1023 -o out/w -q
case_ "synth --output_dir/--output_name" - @ synth --stage-compat $small --dp 2 --tp 2 --batch 8 --micro-batch 4 \
  --output_dir out --output_name w.%d.et -q
}
for coll in allreduce allgather reducescatter alltoall; do
  for algo in ring direct hd tree dbt; do
    case_ "coll gen $coll $algo 8" - @ coll gen --coll "$coll" --algo "$algo" --ranks 8 --size 1M -o out/g
  done
done
case_ "coll gen ring 64 chunks 4" - @ coll gen --coll allreduce --algo ring --ranks 64 --size 64M --chunks 4 -o out/g
case_ "coll gen direct 32 no COMP" - @ coll gen --coll allreduce --algo direct --ranks 32 --size 3M --reduce-bw 0 -o out/g
case_ "coll gen dbt 64 threads 1" - @ coll gen --coll allreduce --algo dbt --ranks 64 --size 1G --threads 1 -o out/g
case_ "coll from-msccl ring16" - @ coll from-msccl --size 1G -o out/m "$in/ring16.xml"
case_ "coll from-msccl ring128, 4 threads (parts)" - @ coll from-msccl --size 1G --threads 4 -o out/m "$in/ring128.xml"
case_ "coll from-msccl ring16 --compat" - @ coll from-msccl --size 1G --compat -o out/m "$in/ring16.xml"
for x in tests/coll/data/*.xml; do
  case_ "coll from-msccl $(basename "$x")" - @ coll from-msccl --size 4M --embed-xml -o out/m "$PWD/$x"
done
for x in "$tr"/msccl/*/*.xml "$tr"/custom-collective/*.xml; do
  [ -e "$x" ] || continue
  case_ "coll from-msccl shared $(basename "$x")" shared @ coll from-msccl --size 1M -o out/m "$x"
  case_ "coll from-msccl shared $(basename "$x") --compat" shared @ coll from-msccl --size 1M --compat --embed-xml \
    -o out/m "$x"
done
case_ "coll synth mesh:4x4 allreduce" - @ coll synth --topology mesh:4x4 --coll allreduce --size 16M -o out/s \
  --xml out/s.xml
case_ "coll synth torus:4x4 allgather chunks 2" - @ coll synth --topology torus:4x4 --coll allgather --size 1M \
  --chunks-per-npu 2 -o out/s
case_ "coll synth switch:8 reducescatter" - @ coll synth --topology switch:8 --coll reducescatter --size 8M -o out/s
case_ "coll expand microbench ring" - @ coll expand --algo ring -o out/e "$in/mb"
case_ "coll expand microbench dbt --overlap" - @ coll expand --algo allreduce=dbt --overlap -o out/e "$in/mb"
case_ "coll expand shared microbench 8 hd" shared @ coll expand --algo hd -o out/e \
  "$tr/astra-microbench/all_reduce/8npus_1MB/all_reduce"
case_ "coll expand shared custom algorithm ETs" shared @ coll expand \
  --algo "allreduce=$tr/custom-collective/custom_allreduce" -o out/e "$tr/astra-microbench/all_reduce/8npus_1MB/all_reduce"
case_ "coll expand shared custom algorithm as-is" shared @ coll expand --custom-collective-scaling as-is \
  --algo "allreduce=$tr/custom-collective/custom_allreduce" -o out/e "$tr/astra-microbench/all_reduce/8npus_1MB/all_reduce"
case_ "coll expand shared stage gpt pp2 --overlap" shared @ coll expand --algo ring --overlap \
  --comm-group-configuration "$tr/stage/gpt_dp1tp4pp2/gpt_dp1tp4pp2.json" -o out/e "$tr/stage/gpt_dp1tp4pp2/gpt_dp1tp4pp2"
for coll in all_reduce all_gather reduce_scatter all_to_all; do
  case_ "gen microbench $coll" - @ gen microbench --coll "$coll" --npus 8 --size 1M -o out/b
done
case_ "convert text DATA" - @ convert text --num-npus 4 -o out/t -q "$in/data.txt"
case_ "convert text DATA --compat" - @ convert text --num-npus 4 --compat -o out/t -q "$in/data.txt"
case_ "convert text DLRM 2 passes" - @ convert text --num-npus 2 --num-passes 2 -o out/t -q "$in/dlrm.txt"
case_ "convert pytorch shared host ET" shared @ convert pytorch -o out/c.et --log out/c.log --comm-groups out/g.json -q \
  "$tr/pytorch-host/host_et.1.0.2-chakra.0.0.4.json"
case_ "convert pytorch shared kineto pair" shared @ convert pytorch -o out/c.et --log out/c.log -q \
  "$tr/kineto-pair/simple_add.host_et.json.gz" "$tr/kineto-pair/simple_add.kineto.json.gz"
case_ "convert pytorch linked pair --compat" shared @ convert pytorch --compat -o out/c.et -q "$in/pair.linked.json"
case_ "convert pytorch linked x20" shared @ convert pytorch -o out/c.et --log out/c.log --comm-groups out/g.json -q \
  "$in/linked20.json"
case_ "convert pytorch linked x20 --compat 1 thread" shared @ convert pytorch --compat --threads 1 -o out/c.et -q \
  "$in/linked20.json"
case_ "convert pytorch linked x400, 4 threads (segments)" shared @ convert pytorch --threads 4 -o out/c.et \
  --log out/c.log -q "$in/linked400.json"
case_ "link shared kineto pair" shared @ link --host "$tr/kineto-pair/simple_add.host_et.json.gz" \
  --device "$tr/kineto-pair/simple_add.kineto.json.gz" -o out/l.json -q
case_ "link shared kineto pair gz, threads 1" shared @ link --host "$tr/kineto-pair/simple_add.host_et.json.gz" \
  --device "$tr/kineto-pair/simple_add.kineto.json.gz" -o out/l.json.gz --threads 1 -q
for r in 0 1; do
  case_ "link two-rank job, rank $r" - @ link --host "$in/h$r.json" --device "$in/k$r.json" -o out/l.json -q
  case_ "link + convert two-rank job, rank $r" - @ convert pytorch -o out/c.et --log out/c.log --comm-groups out/g.json \
    -q "$in/h$r.json" "$in/k$r.json"
done
case_ "pack jsonize of chakra-real" shared @ pack -o out/p.et "$in/real.jsonl"
case_ "obfuscate chakra-real, keyed" shared @ obfuscate --key "$in/key" --hash-strings --time-noise 5 -o out/o.et -q \
  "$tr/chakra-real/pytorch_converted.0.et"

echo "$same same, $differ differ, $skipped skipped"
[ "$differ" = 0 ]
