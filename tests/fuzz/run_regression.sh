#!/bin/sh
# run_regression.sh - replays a fuzz target over its corpus without libFuzzer:
# the checked-in seeds (seeds/<target>/), past findings (regressions/<target>/),
# the bad-input corpus written by badinput/bad_inputs.py, and for the reader
# the small real traces in ../shared when present (the simulator targets: its
# configuration files).
#   run_regression.sh reader|jsonize|encode|pack|hostet|link|textwl|msccl|plot|simsys|simnet|simmem|commgroups|links|synth|plan|collsynth|manifest|flat|issuelog|suiteresult|suitesys|suitedir DRIVER SOURCE_DIR [PYTHON]
# (jsonize, encode and flat take .et input like reader and replay the reader corpus.)
set -eu
target=$1 driver=$2 src=$3 python=${4:-}
[ "$target" = jsonize ] && target=reader
[ "$target" = encode ] && target=reader
[ "$target" = flat ] && target=reader
here=$src/tests/fuzz
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chakra-fuzz-regress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
set -- "$here/seeds/$target"
[ -d "$here/regressions/$target" ] && set -- "$@" "$here/regressions/$target"
if [ -n "$python" ] && [ -x "$python" ] && { [ "$target" = reader ] || [ "$target" = pack ]; }; then
  "$python" "$src/tests/badinput/bad_inputs.py" --write-corpus "$tmp"
  set -- "$@" "$tmp/$target"
fi
shared=${CHAKRA_SHARED:-$src/../shared}
if [ "$target" = reader ] && [ -d "$shared/data/traces" ]; then
  t=$shared/data/traces
  set -- "$@" "$t/astra-microbench/all_to_all/4npus_1MB" "$t/custom-collective/custom_allreduce.0.et" \
    "$t/stage/gpt_small_tponly_dp2tp4/gpt_small_tponly_dp2tp4.3.et" \
    "$t/msccl/alltoall_allpairs_n8/alltoall_allpairs_n8.1.et"
fi
if [ "$target" = hostet ] && [ -d "$shared/data/traces" ]; then
  set -- "$@" "$shared/data/traces/pytorch-host" "$shared/data/traces/kineto-pair/simple_add.host_et.json.gz"
fi
if [ "$target" = link ] && [ -d "$shared/data/traces/kineto-pair" ]; then
  k=$shared/data/traces/kineto-pair
  { gzip -dc "$k/simple_add.host_et.json.gz"; printf '\n%%%%KINETO%%%%\n'; gzip -dc "$k/simple_add.kineto.json.gz"; } \
    > "$tmp/shared_simple_add.txt"
  set -- "$@" "$tmp/shared_simple_add.txt"
fi
if [ "$target" = commgroups ] && [ -d "$shared/data/traces/stage" ]; then
  set -- "$@" "$shared/data/traces/stage"/*/*.json
fi
if [ "$target" = msccl ] && [ -d "$shared/data/traces" ]; then
  t=$shared/data/traces
  set -- "$@" "$t/custom-collective/custom_allreduce.xml" "$t/msccl/alltoall_allpairs_n8/alltoall_allpairs_n8.xml"
fi
if [ -d "$shared/data/configs" ]; then
  case $target in
    simsys) set -- "$@" "$shared/data/configs/system" ;;
    simnet) set -- "$@" "$shared/data/configs/network" ;;
    simmem) set -- "$@" "$shared/data/configs/remote_memory" ;;
  esac
fi
# not exec: the EXIT trap must still remove $tmp; the driver's status is ours
status=0
"$driver" "$@" || status=$?
exit "$status"
