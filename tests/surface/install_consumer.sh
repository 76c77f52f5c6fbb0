#!/bin/sh
# install_consumer.sh - the installed tree works for a program outside the
# build: installs the build into a temporary prefix, moves the tree (both
# package files must find it relative to themselves), then builds the
# example program of docs/library.md against it twice - with
# `pkg-config --cflags --libs chakra` and with a CMake project that calls
# find_package(chakra) (shared and static targets) - and runs each build.
#
#   install_consumer.sh CMAKE BUILD_DIR SOURCE_DIR CC "EXTRA_CFLAGS"
set -eu
cmake=$1 build=$2 src=$3 cc=$4 cflags=${5:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/chakra-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "install_consumer: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$tmp/installed" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
mv "$tmp/installed" "$tmp/moved"
prefix=$tmp/moved

# The program and the CMake project are the first ```c and ```cmake blocks
# of docs/library.md, so the documentation cannot drift from what works.
mkdir "$tmp/project"
awk -v want=c '/^```/ { if (inside) exit; if ($0 == "```" want) inside = 1; next } inside' \
  "$src/docs/library.md" >"$tmp/project/example.c"
awk -v want=cmake '/^```/ { if (inside) exit; if ($0 == "```" want) inside = 1; next } inside' \
  "$src/docs/library.md" >"$tmp/project/CMakeLists.txt"
grep -q 'int main' "$tmp/project/example.c" || fail "no C example in docs/library.md"
grep -q 'find_package(chakra' "$tmp/project/CMakeLists.txt" || fail "no CMake example in docs/library.md"

version=$(sed -n 's/^#define CHAKRA_VERSION_STRING "\(.*\)"$/\1/p' "$prefix"/include/chakra/version.h)
[ -n "$version" ] || fail "installed chakra/version.h has no CHAKRA_VERSION_STRING"

# Runs one build of the example and checks what it prints.
check_run() {
  name=$1 exe=$2
  (cd "$tmp" && "$exe" "$tmp/$name.et") >"$tmp/$name.out" 2>"$tmp/$name.err" ||
    { cat "$tmp/$name.out" "$tmp/$name.err" >&2; fail "$name: the example failed"; }
  for want in "libchakra $version (compiled against $version)" "node 1: COMP_NODE" \
    "node 2: COMM_COLL_NODE ALL_REDUCE of 1048576 bytes" "node 2 is called allreduce"; do
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

# ---- CMake find_package -----------------------------------------------------
"$cmake" -S "$tmp/project" -B "$tmp/project/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" \
  >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "find_package(chakra) failed"; }
"$cmake" --build "$tmp/project/build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "the CMake project does not build"; }
check_run cmake-shared "$tmp/project/build/example"
check_run cmake-static "$tmp/project/build/example_static"
