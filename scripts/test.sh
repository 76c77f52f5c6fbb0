#!/usr/bin/env bash
# Builds chakra-c and runs the whole test suite.
#   scripts/test.sh              release build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/ (--asan is the same)
#   scripts/test.sh --help       this text
# Tests that need ../shared (real traces, reference results) skip, saying
# so, when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
args=(-DCMAKE_BUILD_TYPE=Release)
case "$#:${1:-}" in
  0:) ;;
  1:--sanitize | 1:--asan)
    dir=build-asan
    args=(-DCMAKE_BUILD_TYPE=Debug -DCHAKRA_SANITIZE=ON)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  1:-h | 1:--help)
    sed -n '2,7s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
  *)
    echo "scripts/test.sh: '$*': expected no argument, --sanitize (or --asan) or --help" >&2
    exit 2
    ;;
esac
scripts/install-deps.sh
cmake -S . -B "$dir" "${args[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
