#!/usr/bin/env bash
# Installs the Debian packages chakra-c needs to build and test.
# Idempotent: does nothing (and needs no network) when all are present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  protobuf-c-compiler libprotobuf-c-dev   # the schema, compiled at build time
  libyajl-dev zlib1g-dev                  # JSON parsing, gzip
  libyaml-dev libexpat1-dev               # simulator configs, MSCCL-IR XML
  libcmocka-dev                           # unit tests
  python3 python3-protobuf protobuf-compiler  # independent decoder in tests
  clang libclang-rt-14-dev                # libFuzzer targets
  libopenmpi-dev openmpi-bin              # chakra replay (MPI)
  graphviz                                # chakra dot tests render with dot -Tsvg
  python3-jsonschema                      # docs/set.schema.json against the manifests written
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
