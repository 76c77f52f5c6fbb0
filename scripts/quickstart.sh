#!/usr/bin/env bash
# The whole system on input it makes itself: build chakra-c, synthesise a
# 64-GPU GPT training step, validate it, synthesise an all-reduce for a
# 4x4x4 mesh, expand the job's all-reduces into it, simulate the job on the
# mesh with the native and the synthesised algorithm, and print a table.
#   scripts/quickstart.sh                  all of it (installs what it needs with apt)
#   scripts/quickstart.sh --build-dir DIR  use the chakra already built in DIR: install and build nothing
#   scripts/quickstart.sh --out DIR        write into DIR (default examples/out)
#   scripts/quickstart.sh --help           this text
# Leaves reports, Perfetto timelines and SVG breakdowns in the output folder.
set -euo pipefail
usage() {
  echo "scripts/quickstart.sh: $1: expected --build-dir DIR, --out DIR or --help" >&2
  exit 2
}
build_dir=
out=
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help)
      sed -n '2,10s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    --build-dir | --out)
      [ $# -ge 2 ] && [ -n "$2" ] || usage "'$1' without a folder"
      [ "$1" = --out ] && out=$2 || build_dir=$2
      shift 2
      ;;
    *) usage "'$1'" ;;
  esac
done
# Folders given are taken from where the script was started.
[ -z "$build_dir" ] || build_dir=$(cd "$build_dir" && pwd) || usage "--build-dir '$build_dir' is not a folder"
[ -z "$out" ] || { mkdir -p "$out" && out=$(cd "$out" && pwd); } || usage "--out '$out' cannot be made"
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS
if [ -z "$build_dir" ]; then
  scripts/install-deps.sh
  build_dir=$root/build
  echo "building chakra-c in build/ (Release) ..."
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$(nproc)" --target chakra >/dev/null
fi
chakra=$build_dir/bin/chakra
[ -x "$chakra" ] || usage "no chakra built in '$build_dir' ($chakra)"
out=${out:-$root/examples/out}
mkdir -p "$out"
cd "$out"
rm -f gpt.*.et gpt.json gpt-x.*.et ar.*.et

# Show each step as a user would type it, and what it says.
step() {
  echo "\$ chakra $*" | sed "s|$out/||g; s|$root/||g"
  "$chakra" "$@" 2>&1 | sed 's/^/  /'
}
sys=$root/examples/system.json
net=mesh:4x4x4@50,500
# GPT: 8 blocks, hidden 2048, batch 256 in 4 micro-batches, data-parallel
# over 64 GPUs. A vocabulary of 24576 makes the two embeddings' gradients
# the size of a block's (96 MiB), so one synthesised algorithm fits all ten
# all-reduces exactly.
step synth --num-stacks 8 --dmodel 2048 --dff 8192 --head 16 --seq 2048 --dvocal 24576 \
  --dp 64 --batch 256 --micro-batch 64 --peak-tflops 900 --mem-bw 3000 -o gpt
step validate -q gpt --comm-groups gpt.json
synth=$(step coll synth --topology "$net" --coll allreduce --size 96M --reduce-bw 1600 -o ar) || { echo "$synth"; exit 1; }
echo "$synth"
estimate=$(echo "$synth" | sed -n 's/^  collective time \([0-9]*\) ns .*/\1/p')
step coll expand gpt -o gpt-x --algo allreduce=ar --comm-groups gpt.json --system-configuration "$sys"
# The synthesised algorithm as the simulator's custom all-reduce: every
# ready send of a rank leaves at once, as the synthesiser assumes.
{ sed '$d' "$sys" | sed '$s/$/,/'; echo '  "all-reduce-implementation-custom": ["ar"]'; echo '}'; } >system-custom.json

# One simulation: its per-rank lines and summary go to NAME.txt.
simulate() {
  local name=$1
  shift
  echo "\$ chakra sim $* --network-configuration=$net --report=report-$name.json --summary -q > $name.txt" |
    sed "s|$out/||g; s|$root/||g"
  local err rc=0
  err=$("$chakra" sim "$@" --network-configuration="$net" --report="report-$name.json" --summary -q 2>&1 >"$name.txt") || rc=$?
  [ -z "$err" ] || printf '%s\n' "$err" | sed 's/^/  /'
  return $rc
}
groups=--comm-group-configuration=gpt.json
simulate native --workload-configuration=gpt $groups --system-configuration="$sys" --timeline=timeline-native.json
simulate expanded --workload-configuration=gpt-x $groups --system-configuration="$sys" --timeline=timeline-expanded.json
simulate custom --workload-configuration=gpt $groups --system-configuration=system-custom.json
step plot report-native.json -o breakdown-native.svg
step plot report-expanded.json -o breakdown-expanded.svg

# The table, from the simulator's own summaries (tests/cli/quickstart.py checks it against the reports).
row() {
  sed -n 's/^summary: .* at \([0-9.]*\) us$/\1/p; s/^  mean exposed communication \([0-9.]*\) us, mean GPU compute \([0-9.]*\) us per rank$/\1 \2/p' "$2.txt" |
    tr '\n' ' ' | awk -v what="$1" '{ printf "%-44s %9.3f ms %12.3f ms %11.3f ms\n", what, $1 / 1000, $2 / 1000, $3 / 1000 }'
}
echo
echo "GPT (8 blocks, hidden 2048), data-parallel on 64 GPUs, 4x4x4 mesh of 50 GB/s, 500 ns links; one iteration:"
printf "%-44s %12s %15s %14s\n" "all-reduce algorithm" "iteration" "exposed comm" "GPU compute"
row "native (ring per mesh dimension)" native
row "synthesised (TACOS-style), expanded" expanded
row "synthesised, as the custom all-reduce" custom
echo "(means over ranks. Expanded, a rank sends one message at a time and the reductions are compute"
echo " nodes: docs/coll.md, \"Simulating expanded collectives\". As the custom all-reduce, every ready"
echo " message leaves at once, as the synthesiser planned: coll synth's $estimate ns per all-reduce.)"
echo
echo "files in ${out#"$root/"}/:"
echo "  gpt.*.et, gpt.json                   the job (64 ranks) and its communicator groups"
echo "  ar.*.et, gpt-x.*.et                  the synthesised all-reduce; the job with it expanded"
echo "  report-{native,expanded,custom}.json simulation reports; NAME.txt their per-rank lines and summary"
echo "  timeline-{native,expanded}.json      timelines: open in https://ui.perfetto.dev"
echo "  breakdown-{native,expanded}.svg      per-rank compute / exposed communication: open in a browser"
echo "done in $((SECONDS - start)) s; the CLI is ${chakra#"$root/"}"
