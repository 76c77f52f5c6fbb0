#!/bin/sh
# exports.sh - libchakra.so exports only chakra_ names: the CHAKRA_API
# functions of the headers and the protobuf-c code generated from the schema
# (chakra_proto_msg__*). Fails on any other defined dynamic symbol, and when
# names the headers promise are missing (so hiding everything cannot pass).
# In a sanitizer build AddressSanitizer adds an ODR indicator,
# __odr_asan.NAME, beside each exported variable NAME; those of chakra_
# names are its doing, not ours, and are accepted.
#
#   exports.sh NM LIBCHAKRA.so
set -eu
nm=$1 lib=$2
syms=$("$nm" -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }')
[ -n "$syms" ] || { echo "exports: $lib exports nothing" >&2; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v -e '^chakra_' -e '^__odr_asan\.chakra_' || true)
if [ -n "$bad" ]; then
  echo "exports: $lib exports $(printf '%s\n' "$bad" | wc -l) name(s) without the chakra_ prefix:" >&2
  printf '  %s\n' $bad >&2
  exit 1
fi
for want in chakra_version chakra_reader_open chakra_writer_put chakra_graph_load chakra_node_free \
  chakra_problem_format chakra_validate chakra_proto_msg__node__descriptor; do
  printf '%s\n' "$syms" | grep -qx "$want" || { echo "exports: $lib does not export $want" >&2; exit 1; }
done
echo "exports: $(printf '%s\n' "$syms" | wc -l) names, none outside chakra_"
