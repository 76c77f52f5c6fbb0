#!/bin/sh
# install_consumer.sh - the installed tree works for a program outside the
# build: installs the build into a temporary prefix, moves the tree (both
# package files must find it relative to themselves), then
#  - builds the example program of docs/library.md (stable tier) against it
#    twice - with `pkg-config --cflags --libs chakra` and with a CMake
#    project that calls find_package(chakra) (shared and static targets) -
#    and runs each build; builds and runs the docs' experimental-tier
#    example on its output;
#  - builds calls.c (stable tier, -Werror) against libchakra.so and runs
#    it: it must report a call into every installed header;
#  - with PYTHON, builds a program that takes the address of every function
#    and variable the installed headers declare (surface.py references),
#    against libchakra.so, and against libchakra_replay.so when installed.
#
#   install_consumer.sh CMAKE BUILD_DIR SOURCE_DIR CC "EXTRA_CFLAGS" [PYTHON]
set -eu
cmake=$1 build=$2 src=$3 cc=$4 cflags=${5:-} python=${6:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chakra-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "install_consumer: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$tmp/installed" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
mv "$tmp/installed" "$tmp/moved"
prefix=$tmp/moved

# The programs and the CMake project are the first two ```c blocks and the
# first ```cmake block of docs/library.md, so the documentation cannot
# drift from what works.
mkdir "$tmp/project"
block() { # LANGUAGE N: the Nth block of that language
  awk -v want="$1" -v nth="$2" '/^```/ { if (inside) { if (seen == nth) exit; inside = 0; next }
    if ($0 == "```" want) { seen++; inside = 1 }; next } inside && seen == nth' "$src/docs/library.md"
}
block c 1 >"$tmp/project/example.c"
block c 2 >"$tmp/names.c"
block cmake 1 >"$tmp/project/CMakeLists.txt"
grep -q 'int main' "$tmp/project/example.c" || fail "no C example in docs/library.md"
grep -q 'CHAKRA_EXPERIMENTAL' "$tmp/project/example.c" && fail "the first C example of docs/library.md is not stable-tier"
grep -q '^#define CHAKRA_EXPERIMENTAL' "$tmp/names.c" || fail "no experimental-tier C example in docs/library.md"
grep -q 'find_package(chakra' "$tmp/project/CMakeLists.txt" || fail "no CMake example in docs/library.md"

version=$(sed -n 's/^#define CHAKRA_VERSION_STRING "\(.*\)"$/\1/p' "$prefix"/include/chakra/version.h)
[ -n "$version" ] || fail "installed chakra/version.h has no CHAKRA_VERSION_STRING"

# Runs one build of the example and checks what it prints.
check_run() {
  name=$1 exe=$2
  (cd "$tmp" && "$exe" "$tmp/$name.et") >"$tmp/$name.out" 2>"$tmp/$name.err" ||
    { cat "$tmp/$name.out" "$tmp/$name.err" >&2; fail "$name: the example failed"; }
  for want in "libchakra $version (compiled against $version)" "node 1: COMP_NODE" \
    "node 2: COMM_COLL_NODE ALL_REDUCE of 1048576 bytes" "critical path: 10 us, ending at node 1"; do
    grep -qxF "$want" "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; fail "$name: expected the line '$want'"; }
  done
  [ ! -s "$tmp/$name.err" ] || { cat "$tmp/$name.err" >&2; fail "$name: unexpected output on stderr"; }
  echo "$name: ok"
}

# ---- pkg-config -------------------------------------------------------------
pc=$(find "$prefix" -name chakra.pc | head -n 1)
[ -n "$pc" ] || fail "no chakra.pc installed"
export PKG_CONFIG_PATH="$(dirname "$pc")"
pc_flags=$(pkg-config --cflags --libs chakra) || fail "pkg-config --cflags --libs chakra failed"
pc_includedir=$(pkg-config --variable=includedir chakra)
[ -f "$pc_includedir/chakra/trace.h" ] || fail "pkg-config's includedir ($pc_includedir) is not the moved tree"
pkg-config --print-requires chakra | grep -q '^libprotobuf-c' || fail "protobuf-c is not a public requirement"
libdir=$(pkg-config --variable=libdir chakra)
# shellcheck disable=SC2086 # the flags are words
"$cc" $cflags -o "$tmp/example_pc" "$tmp/project/example.c" $pc_flags -Wl,-rpath,"$libdir" ||
  fail "the example does not build with pkg-config ($pc_flags)"
check_run pkg-config "$tmp/example_pc"

# The experimental tier, on the trace the stable example wrote.
# shellcheck disable=SC2086
"$cc" $cflags -o "$tmp/names" "$tmp/names.c" $pc_flags -Wl,-rpath,"$libdir" ||
  fail "the experimental-tier example does not build with pkg-config"
"$tmp/names" "$tmp/pkg-config.et" >"$tmp/names.out" 2>&1 || { cat "$tmp/names.out" >&2; fail "names: failed"; }
for want in "version 0.0.4" "node 1 is called matmul" "node 2 is called allreduce"; do
  grep -qxF "$want" "$tmp/names.out" || { cat "$tmp/names.out" >&2; fail "names: expected the line '$want'"; }
done
echo "experimental tier: ok"

# ---- every header, stable tier ---------------------------------------------
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags -o "$tmp/calls" "$src/tests/surface/calls.c" $pc_flags \
  -Wl,-rpath,"$libdir" || fail "calls.c does not build against the installed headers (stable tier)"
mkdir "$tmp/calls.d"
"$tmp/calls" "$tmp/calls.d" >"$tmp/calls.out" 2>&1 || { cat "$tmp/calls.out" >&2; fail "calls: failed"; }
for h in "$pc_includedir"/chakra/*.h; do
  h=$(basename "$h")
  case $h in et_def.pb-c.h | replay.h) continue ;; esac # generated; libchakra_replay's
  grep -qxF "$h: ok" "$tmp/calls.out" || { cat "$tmp/calls.out" >&2; fail "calls.c calls nothing of $h"; }
done
echo "calls: every installed header called"

# ---- every declared name, linked --------------------------------------------
if [ -n "$python" ]; then
  headers=$(ls "$pc_includedir"/chakra/*.h | grep -v -e '/et_def\.pb-c\.h$' -e '/replay\.h$')
  # shellcheck disable=SC2086
  "$python" "$src/tests/surface/surface.py" references $headers --out="$tmp/references.c" ||
    fail "surface.py references failed"
  # shellcheck disable=SC2086
  "$cc" $cflags -o "$tmp/references" "$tmp/references.c" $pc_flags -Wl,-rpath,"$libdir" ||
    fail "a program naming every declared function does not link against libchakra.so"
  "$tmp/references" || fail "references: failed"
  if [ -e "$libdir/libchakra_replay.so" ]; then
    replay_flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs chakra-replay) ||
      fail "pkg-config --cflags --libs chakra-replay failed"
    # shellcheck disable=SC2086
    "$python" "$src/tests/surface/surface.py" references $headers "$pc_includedir/chakra/replay.h" \
      --out="$tmp/references_replay.c" || fail "surface.py references failed"
    # shellcheck disable=SC2086
    "$cc" $cflags -o "$tmp/references_replay" "$tmp/references_replay.c" $replay_flags -Wl,-rpath,"$libdir" ||
      fail "a program naming every declared function does not link against libchakra_replay.so"
    "$tmp/references_replay" || fail "references (replay): failed"
  fi
fi

# ---- CMake find_package -----------------------------------------------------
"$cmake" -S "$tmp/project" -B "$tmp/project/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" \
  >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "find_package(chakra) failed"; }
"$cmake" --build "$tmp/project/build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "the CMake project does not build"; }
check_run cmake-shared "$tmp/project/build/example"
check_run cmake-static "$tmp/project/build/example_static"
