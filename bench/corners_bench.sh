#!/usr/bin/env bash
# Inputs that used to hit quadratic corners, at growing sizes: time and
# peak memory must grow linearly.
#   bench/corners_bench.sh [BUILD_DIR]
# - pack: one JSON string of 64, 128 and 192 MiB, through a pipe (yajl
#   re-lexes a token that spans chunks from its start; chunks that complete
#   no token now double the next read).
# - sim: a 1 GiB all-reduce on 8 ranks with preferred-dataset-splits of
#   25,000, 50,000 and 100,000 (each chunk's stream was appended by walking
#   the queue).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
chakra=$build/bin/chakra
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/chakra-corners.XXXXXX")
trap 'rm -rf "$work"' EXIT

printf '%-34s %10s %10s %12s\n' case seconds "MiB/s" "peak RSS MB"
huge_string_doc() { # MIB: one node whose name is MIB MiB of 'x'
  printf '{"version":"0.0.4"}\n{"id":1,"type":"COMP_NODE","name":"'
  head -c $(($1 << 20)) /dev/zero | tr '\0' x
  printf '"}\n'
}
for mib in 64 128 192; do # a message is at most 256 MB
  huge_string_doc "$mib" | /usr/bin/time -f "%e %M" -o "$work/t" "$chakra" pack - -o "$work/big.et"
  read -r secs kb < "$work/t"
  awk -v m="$mib" -v s="$secs" -v k="$kb" \
    'BEGIN { printf "%-34s %10.2f %10.1f %12.0f\n", "pack, one " m " MiB string (pipe)", s, m / s, k / 1000 }'
done

"$chakra" gen microbench --coll all_reduce --npus 8 --size 1G -o "$work/ar8"
for splits in 25000 50000 100000; do
  sed "s/\"preferred-dataset-splits\": *[0-9]*/\"preferred-dataset-splits\": $splits/" examples/system.json \
    > "$work/sys.json"
  /usr/bin/time -f "%e %M" -o "$work/t" "$chakra" sim --workload-configuration="$work/ar8" \
    --system-configuration="$work/sys.json" --network-configuration=examples/ring8.yml -q > /dev/null
  read -r secs kb < "$work/t"
  awk -v n="$splits" -v s="$secs" -v k="$kb" \
    'BEGIN { printf "%-34s %10.2f %10s %12.0f\n", "sim, " n " dataset splits", s, "-", k / 1000 }'
done
