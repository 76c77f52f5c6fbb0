#!/usr/bin/env bash
# python_bench.sh - chakra_c.columns() and read() against reading through
# the reference's protobuf classes in Python, on a 1,000,000-node trace
# (bench/viewgen: PyTorch-like names, dependencies, is_cpu_op on every
# node, an all-reduce per layer). docs/python.md has the figures.
#
#   bench/python_bench.sh     (NODES=1000000, REPEAT=5, BUILD_DIR=build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake --build "$build" --target chakra_shared viewgen -j2 >/dev/null
work=$(mktemp -d /tmp/chakra-python-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$build/bin/viewgen" "$work/t" 1 "${NODES:-1000000}"
CHAKRA_LIB=$build/lib/libchakra.so PYTHONPATH=$root/python \
  /usr/bin/python3 "$root/bench/python_bench.py" --trace "$work/t.0.et" --source-dir "$root" \
  --protoc "$(command -v protoc)" --repeat "${REPEAT:-5}"
