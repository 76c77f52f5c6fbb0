#!/usr/bin/env bash
# Builds chakra-c and runs the whole test suite.
#   scripts/test.sh              release build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/
#   --werror (with either)       compiler warnings are errors (CI: .ci/run)
# Tests that need ../shared (real traces, reference results) skip, saying
# so, when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

dir=build
args=(-DCMAKE_BUILD_TYPE=Release)
werror=OFF
for a in "$@"; do
  case $a in
    --sanitize)
      dir=build-asan
      args=(-DCMAKE_BUILD_TYPE=Debug -DCHAKRA_SANITIZE=ON)
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      ;;
    --werror) werror=ON ;;
    *) echo "usage: scripts/test.sh [--sanitize] [--werror]" >&2; exit 2 ;;
  esac
done
cmake -S . -B "$dir" "${args[@]}" -DCHAKRA_WERROR=$werror >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
