#!/bin/sh
# cli_roundtrip.sh - pins the CLI round trip on a sample of real traces:
# `chakra jsonize` (JSON Lines, --document, --compat) then `chakra pack`
# gives back the input byte for byte, with nothing on stderr; and through
# gzip both ways (.gz names). test_roundtrip_shared covers every file via
# the library; this covers the programs users run.
#   cli_roundtrip.sh CHAKRA SOURCE_DIR        exit 77 = no shared folder
set -u
chakra=$1
shared=${CHAKRA_SHARED:-$2/../shared}
if [ ! -d "$shared/data/traces" ]; then
  echo "SKIP: shared folder not found (set CHAKRA_SHARED or provide ../shared)"
  exit 77
fi
d=$shared/data
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chakra-cli-rt.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for f in \
  "$d/traces/chakra-real/pytorch_converted.0.et" \
  "$d/reference/convert/host_et.1.0.2-chakra.0.0.4.reference.et" \
  "$d/traces/stage/gpt_small_tponly_dp2tp4/gpt_small_tponly_dp2tp4.0.et" \
  "$d/traces/msccl/allgather_ring_nofusion_n8/allgather_ring_nofusion_n8.5.et"
do
  [ -f "$f" ] || { echo "FAIL missing sample $f"; fail=1; continue; }
  for layout in lines --document --compat; do
    flag=$layout
    [ "$layout" = lines ] && flag=
    # shellcheck disable=SC2086
    if ! "$chakra" jsonize $flag "$f" -o "$tmp/t.json" 2>"$tmp/err"; then
      echo "FAIL chakra jsonize $flag $f: $(cat "$tmp/err")"; fail=1; continue
    fi
    if ! "$chakra" pack "$tmp/t.json" -o "$tmp/back.et" 2>>"$tmp/err"; then
      echo "FAIL chakra pack ($layout) $f: $(cat "$tmp/err")"; fail=1; continue
    fi
    if [ -s "$tmp/err" ]; then echo "FAIL $f ($layout): unexpected stderr: $(cat "$tmp/err")"; fail=1; fi
    if ! cmp -s "$f" "$tmp/back.et"; then
      echo "FAIL $f ($layout): jsonize + pack is not byte-identical: $(cmp "$f" "$tmp/back.et" 2>&1)"; fail=1
    fi
    n=$((n + 1))
  done
done

# gzip both ways: JSON written compressed, the trace packed compressed.
f=$d/traces/custom-collective/custom_allreduce.0.et
"$chakra" jsonize "$f" -o "$tmp/t.jsonl.gz" && "$chakra" pack "$tmp/t.jsonl.gz" -o "$tmp/back.et.gz" \
  || { echo "FAIL gzip round trip of $f"; fail=1; }
if [ "$(od -An -tx1 -N2 "$tmp/t.jsonl.gz" | tr -d ' ')" != 1f8b ] ||
   [ "$(od -An -tx1 -N2 "$tmp/back.et.gz" | tr -d ' ')" != 1f8b ]; then
  echo "FAIL .gz outputs are not gzip"; fail=1
fi
if ! gzip -dc "$tmp/back.et.gz" | cmp -s "$f" -; then echo "FAIL gzip round trip of $f differs"; fail=1; fi
# and a compressed trace reads like the plain one
gzip -c "$f" > "$tmp/in.et.gz"
"$chakra" jsonize "$tmp/in.et.gz" -o "$tmp/a.json" && "$chakra" jsonize "$f" -o "$tmp/b.json" &&
  cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL jsonize of gzip input differs"; fail=1; }
# no temporaries left in the output directory
left=$(ls -A "$tmp" | grep '^\.' || true)
[ -z "$left" ] || { echo "FAIL temporary files left: $left"; fail=1; }

echo "$n jsonize+pack round trips through the CLI, plus gzip: $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
