#!/usr/bin/env bash
# Builds chakra-c and runs the whole test suite.
#   scripts/test.sh              release build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/ (--asan is the same)
#   --werror (with either)       compiler warnings are errors (CI: .ci/run)
#   scripts/test.sh --help       this text
# Tests that need ../shared (real traces, reference results) skip, saying
# so, when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
args=(-DCMAKE_BUILD_TYPE=Release)
werror=OFF
for a in "$@"; do
  case $a in
    --sanitize | --asan)
      dir=build-asan
      args=(-DCMAKE_BUILD_TYPE=Debug -DCHAKRA_SANITIZE=ON)
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      ;;
    --werror) werror=ON ;;
    -h | --help)
      sed -n '2,8s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    *)
      echo "scripts/test.sh: '$a': expected --sanitize (or --asan), --werror or --help" >&2
      exit 2
      ;;
  esac
done
scripts/install-deps.sh
cmake -S . -B "$dir" "${args[@]}" -DCHAKRA_WERROR=$werror >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
