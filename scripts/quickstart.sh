#!/usr/bin/env bash
# The main job on example input the project makes itself: build chakra-c,
# generate an 8-rank all-reduce workload, check it, and simulate it.
#   scripts/quickstart.sh          all of it (installs what it needs with apt)
#   scripts/quickstart.sh --help   this text
# Leaves a JSON report and a Perfetto timeline in examples/out/.
set -euo pipefail
case "$#:${1:-}" in
  0:) ;;
  1:-h | 1:--help)
    sed -n '2,6s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
  *)
    echo "scripts/quickstart.sh: '$*': expected no argument or --help" >&2
    exit 2
    ;;
esac
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
