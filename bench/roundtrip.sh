#!/usr/bin/env bash
# roundtrip.sh - checks that `chakra jsonize X` then `chakra pack` gives X
# back byte for byte, for every .et under the shared data folder and in all
# three JSON layouts; and that the reference-compatible layout of
# pytorch_converted.0.et has the reference size (6,750,112 bytes).
# Run after any change to the format layer's hot paths.
#   bench/roundtrip.sh [BUILD_DIR]        (default: build; relative to the repo)
# With CHAKRA_BASELINE=/path/to/old/chakra, also checks that every layout's
# JSON is byte-identical to what the old binary writes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
bin="$build/bin/chakra"
shared=${CHAKRA_SHARED:-$root/../shared}
if [ ! -d "$shared/data" ]; then
  echo "roundtrip: no shared data at $shared (set CHAKRA_SHARED); skipped"
  exit 0
fi
tmp=$(mktemp -d /tmp/chakra-roundtrip.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  for layout in "" --document --compat; do
    if ! "$bin" jsonize $layout "$f" -o "$tmp/j" 2>/dev/null ||
       ! "$bin" pack "$tmp/j" -o "$tmp/y.et" 2>/dev/null ||
       ! cmp -s "$f" "$tmp/y.et"; then
      echo "MISMATCH ${layout:-lines}: $f"
      bad=$((bad + 1))
    fi
    if [ -n "${CHAKRA_BASELINE:-}" ]; then
      "$CHAKRA_BASELINE" jsonize $layout "$f" -o "$tmp/b" 2>/dev/null || true
      if ! cmp -s "$tmp/j" "$tmp/b"; then
        echo "JSON DIFFERS from baseline ${layout:-lines}: $f"
        bad=$((bad + 1))
      fi
    fi
  done
done < <(find "$shared/data" -name '*.et' -print0 | sort -z)
real="$shared/data/traces/chakra-real/pytorch_converted.0.et"
size=$("$bin" jsonize --compat "$real" | wc -c)
if [ "$size" != 6750112 ]; then
  echo "compat size of pytorch_converted.0.et is $size, expected 6750112"
  bad=$((bad + 1))
fi
echo "roundtrip: $n files x 3 layouts, $bad problem(s); compat size $size"
[ "$bad" = 0 ]
