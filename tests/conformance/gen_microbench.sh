#!/bin/sh
# gen_microbench.sh - pins `chakra gen microbench` against ASTRA-sim's own
# microbenchmark traces: for every folder
# shared/data/traces/astra-microbench/<coll>/<N>npus_1MB, the generated
# PREFIX.<r>.et is byte-identical to <coll>.<r>.et for every rank r, and no
# extra rank file is written.
#   gen_microbench.sh CHAKRA SOURCE_DIR        exit 77 = no shared folder
set -u
chakra=$1
shared=${CHAKRA_SHARED:-$2/../shared}
base=$shared/data/traces/astra-microbench
if [ ! -d "$base" ]; then
  echo "SKIP: $base not found (set CHAKRA_SHARED or provide ../shared)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chakra-gen.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
folders=0
files=0
for dir in "$base"/*/*npus_1MB; do
  coll=$(basename "$(dirname "$dir")")
  npus=$(basename "$dir" | sed 's/npus_1MB$//')
  out=$tmp/$coll.$npus
  mkdir "$out"
  if ! "$chakra" gen microbench --coll "$coll" --npus "$npus" --size 1048576 -o "$out/x" 2>"$tmp/err" ||
     [ -s "$tmp/err" ]; then
    echo "FAIL gen microbench --coll $coll --npus $npus: $(cat "$tmp/err")"; fail=1; continue
  fi
  r=0
  while [ "$r" -lt "$npus" ]; do
    if ! cmp "$out/x.$r.et" "$dir/$coll.$r.et"; then
      echo "FAIL $coll ${npus}npus rank $r differs from $dir/$coll.$r.et"; fail=1
    fi
    files=$((files + 1))
    r=$((r + 1))
  done
  extra=$(ls -A "$out" | wc -l)
  [ "$extra" -eq "$npus" ] || { echo "FAIL $coll ${npus}npus: $extra files written, want $npus"; fail=1; }
  folders=$((folders + 1))
done
[ "$folders" -gt 0 ] || { echo "FAIL no microbench folders under $base"; fail=1; }
echo "$folders folders, $files rank files compared: $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
