#!/bin/sh
# text_many_npus.sh - `chakra convert text` writes 4,096 NPU files with only
# 64 descriptors allowed (the workload writer keeps a few open whatever the
# rank count), every file decodes, and a run that fails part-way leaves no
# file and no temporary behind.
#   text_many_npus.sh CHAKRA
set -u
chakra=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chakra-textnpus.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf 'DATA\n2\nconv1 -1 5 ALLREDUCE 10 6 ALLTOALL 20 7 ALLREDUCE 100 1\nfc -1 8 NONE 0 9 NONE 0 10 ALLGATHER 50 1\n' \
  >"$tmp/w.txt"

mkdir "$tmp/ok"
(ulimit -n 64 && "$chakra" convert text -q --num-npus 4096 -o "$tmp/ok/w" "$tmp/w.txt") ||
  fail "convert text --num-npus 4096 under ulimit -n 64"
n=$(ls -A "$tmp/ok" | wc -l)
[ "$n" -eq 4096 ] || fail "expected 4096 files (and no temporaries), found $n"
for r in 0 1 2047 4095; do [ -f "$tmp/ok/w.$r.et" ] || fail "w.$r.et missing"; done
out=$("$chakra" validate "$tmp/ok/w" 2>&1) || fail "validate: $out"
echo "$out" | grep -q "^4096 file(s), 28672 node(s): 0 error(s), 0 warning(s)" || fail "validate said: $out"
# every NPU of a default-mode conversion gets the same bytes
cmp -s "$tmp/ok/w.0.et" "$tmp/ok/w.4095.et" || fail "w.0.et and w.4095.et differ"

# a rank that cannot be written (its name is taken by a folder) fails the
# whole run: no rank file and no temporary is left
mkdir "$tmp/bad" "$tmp/bad/w.3000.et"
if (ulimit -n 64 && "$chakra" convert text -q --num-npus 4096 -o "$tmp/bad/w" "$tmp/w.txt") 2>"$tmp/err"; then
  fail "convert text succeeded although w.3000.et is a folder"
fi
grep -q "w.3000.et" "$tmp/err" || fail "the error does not name w.3000.et: $(cat "$tmp/err")"
left=$(ls -A "$tmp/bad")
[ "$left" = "w.3000.et" ] || fail "files left after the failure: $(echo $left | head -c 300)"
echo "ok: 4096 NPU files under ulimit -n 64; a failure leaves nothing"
