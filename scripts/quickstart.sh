#!/usr/bin/env bash
# The main job on example input the project makes itself: build chakra-c,
# generate an 8-rank all-reduce workload, check it, and simulate it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target chakra >/dev/null
mkdir -p examples/out
build/bin/chakra gen microbench --coll all_reduce --npus 8 --size 1M -o examples/out/allreduce
build/bin/chakra validate -q examples/out/allreduce
build/bin/chakra sim --network-model=unaware \
  --workload-configuration=examples/out/allreduce \
  --system-configuration=examples/system.json \
  --network-configuration=examples/ring8.yml \
  --report=examples/out/report.json --timeline=examples/out/timeline.json --summary -q
echo
echo "report: examples/out/report.json; timeline (open in ui.perfetto.dev): examples/out/timeline.json"
