#!/usr/bin/env bash
# Runs every libFuzzer target for MINUTES minutes each, two at a time (one
# per core), under ASan+UBSan, from a corpus seeded with tests/fuzz/seeds and
# the small real traces in ../shared. Findings (crash-*, leak-*, timeout-*)
# are kept in build-fuzz/findings/<target>/; the last lines say, per target,
# how many CPU-seconds it ran and whether it ran clean.
#   scripts/fuzz.sh MINUTES [TARGET...]
#
# --check is what CI runs (.ci/run): the whole project - library, program,
# tests and every libFuzzer target - built with clang and -Werror in
# build-clang/ (ASan+UBSan, as fuzzing builds it), then each target run
# once over its seeded corpus (-runs=0: no fuzzing, a few seconds).
#   scripts/fuzz.sh --check
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/fuzz.sh MINUTES [TARGET...] | scripts/fuzz.sh --check"
minutes=${1:?$usage}
shift
check=0
if [ "$minutes" = --check ]; then
  [ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
  check=1
fi
case $minutes in --check) ;; '' | *[!0-9]*) echo "fuzz.sh: MINUTES must be a whole number" >&2; exit 2 ;; esac
scripts/install-deps.sh
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(reader jsonize encode pack hostet link textwl msccl plot simsys simnet simmem commgroups links synth plan collsynth manifest flat issuelog suiteresult suitesys suitedir)

build=build-fuzz
if [ $check -eq 1 ]; then
  build=build-clang
  CC=clang cmake -S . -B $build -DCMAKE_BUILD_TYPE=Debug -DCHAKRA_SANITIZE=ON -DCHAKRA_FUZZ=ON -DCHAKRA_WERROR=ON >/dev/null
  cmake --build $build -j"$(nproc)"
else
  CC=clang cmake -S . -B $build -DCMAKE_BUILD_TYPE=Debug -DCHAKRA_SANITIZE=ON -DCHAKRA_FUZZ=ON >/dev/null
  cmake --build $build -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null
fi

shared=${CHAKRA_SHARED:-../shared}
seed_corpus() { # TARGET DIR: checked-in seeds (hex decoded) and shared inputs
  local t=$1 dir=$2 src=$1
  [ "$t" = jsonize ] && src=reader
  [ "$t" = encode ] && src=reader
  [ "$t" = flat ] && src=reader
  mkdir -p "$dir"
  for f in tests/fuzz/seeds/$src/* tests/fuzz/regressions/$src/*; do
    [ -f "$f" ] || continue
    case $f in
      *.hex) { grep -v '^#' "$f" || true; } | xxd -r -p > "$dir/$(basename "$f" .hex)" ;; # all comment: the empty input
      *) cp "$f" "$dir/" ;;
    esac
  done
  local cf=$shared/data/configs
  if [ -d "$cf" ]; then
    case $src in
      simsys) cp "$cf"/system/*.json "$dir/" ;;
      simnet) cp "$cf"/network/*.yml "$dir/" ;;
      simmem) cp "$cf"/remote_memory/*.json "$dir/" ;;
    esac
  fi
  local tr=$shared/data/traces
  [ -d "$tr" ] || return 0
  case $src in
    reader) cp "$tr"/astra-microbench/all_to_all/4npus_1MB/*.0.et "$tr"/msccl/alltoall_allpairs_n8/*.1.et "$dir/" ;;
    hostet) gzip -dc "$tr/kineto-pair/simple_add.host_et.json.gz" > "$dir/shared_host.json" ;;
    link) { gzip -dc "$tr/kineto-pair/simple_add.host_et.json.gz"; printf '\n%%%%KINETO%%%%\n'
            gzip -dc "$tr/kineto-pair/simple_add.kineto.json.gz"; } > "$dir/shared_pair.txt" ;;
    commgroups) cp "$tr"/stage/*/*.json "$dir/" ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

if [ $check -eq 1 ]; then
  failed=0
  for t in "${targets[@]}"; do
    corpus=$build/corpus/$t
    rm -rf "$corpus"
    seed_corpus "$t" "$corpus"
    n=$(find "$corpus" -type f | wc -l)
    if $build/bin/fuzz_"$t" -runs=0 -timeout=60 -rss_limit_mb=2048 "$corpus" >"$build/$t.log" 2>&1; then
      echo "fuzz_$t: $n inputs, clean"
    else
      echo "fuzz_$t: FAILED over its corpus: see $build/$t.log" >&2
      failed=1
    fi
  done
  exit $failed
fi
run_one() { # TARGET
  local t=$1 corpus=build-fuzz/corpus/$1 out=build-fuzz/findings/$1
  seed_corpus "$t" "$corpus"
  mkdir -p "$out"
  local dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  local start=$(date +%s) rc=0
  # CPU time, not wall time, is what the record counts: a loaded machine
  # (or `nice`) stretches wall time without fuzzing more.
  /usr/bin/time -f '%U %S' -o "build-fuzz/$t.cpu" build-fuzz/bin/fuzz_"$t" -max_total_time=$((minutes * 60)) -max_len=8192 -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="$out/" -print_final_stats=1 "${dict[@]}" "$corpus" > "build-fuzz/$t.log" 2>&1 || rc=$?
  local secs cpu runs
  secs=$(( $(date +%s) - start ))
  cpu=$(awk 'END { printf "%d", $1 + $2 }' "build-fuzz/$t.cpu" 2>/dev/null || echo "?")
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$t.log" | grep -o '[0-9]*$' || echo "?")
  if [ $rc -eq 0 ]; then echo "$t: clean, $cpu CPU-seconds ($secs s wall), $runs executions"
  else echo "$t: FINDING (exit $rc) after $secs s: see build-fuzz/$t.log and $out/"; fi
}

jobs=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do sleep 1; done
  run_one "$t" &
done
wait
