#!/usr/bin/env bash
# The C and C++ tests. Builds the release library, installs it (make -C ffi-c install) into a
# temporary prefix, and builds and runs every test against that installed copy: the C tests
# through pkg-config, the C++ tests through the CMake package. Then the main C test again
# under valgrind. test_redis_lease leases worker values through every form of Redis address
# from servers that tests/servers/serve.py starts. Ends with the line "N passed, M failed" (checks of the test programs plus
# one per step here) and exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-c.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
VECTORS=$PWD/tests/vectors
STRICT=(-Wall -Wextra -Werror -pedantic)
# check, program, says, section: tests/lib.sh.
# shellcheck source=tests/lib.sh
. tests/lib.sh

installed_layout() {
  local lib=$PREFIX/lib
  test -f "$lib/libsnowflake.so.$VERSION" && test -L "$lib/libsnowflake.so.$SOVERSION" &&
    test -L "$lib/libsnowflake.so" && test -f "$lib/libsnowflake.a" &&
    test "$(readlink "$lib/libsnowflake.so")" = "libsnowflake.so.$SOVERSION" &&
    readelf -d "$lib/libsnowflake.so.$VERSION" | grep -q "SONAME.*\[libsnowflake.so.$SOVERSION\]" &&
    test -f "$PREFIX/include/snowflake.h" && test -f "$PREFIX/include/snowflake.hpp" &&
    test -f "$PREFIX/include/snowflake_php.h" && test -f "$lib/pkgconfig/snowflake.pc" &&
    test -f "$lib/cmake/snowflake/snowflake-config.cmake" &&
    test -f "$lib/cmake/snowflake/snowflake-config-version.cmake" &&
    PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --exact-version="$VERSION" snowflake
}

no_libsnowflake_needed() { ! ldd "$1" | grep -q libsnowflake; }
prints() { "$2" >"$WORK/out" 2>&1 && grep -q "$1" "$WORK/out"; }
nodiscard_is_enforced() {
  printf '#include <snowflake.hpp>\nvoid f(const snowflake::Generator& g) { g.next_id(); }\n' >"$WORK/nodiscard.cpp"
  ! g++ -std=c++17 -Werror=unused-result -I"$PREFIX/include" -fsyntax-only "$WORK/nodiscard.cpp"
}
docs_show_the_tested_examples() {
  python3 - <<'PY'
import sys
doc = open("docs/c.md").read()
for path, lang in [("tests/c/example.c", "c"), ("tests/cpp/example/example.cpp", "cpp"),
                   ("tests/cpp/example/CMakeLists.txt", "cmake")]:
    if "```%s\n%s```" % (lang, open(path).read()) not in doc:
        sys.exit("docs/c.md does not show %s as it is" % path)
PY
}
# PHP's FFI has no preprocessor: snowflake_php.h must load as it is installed (FFI::load,
# FFI_LIB pointed at the installed library) and, without its two #defines, through FFI::cdef.
php_ffi_reads_the_php_header() {
  sed "s|\"libsnowflake.so\"|\"$LIBDIR/libsnowflake.so.$SOVERSION\"|" "$PREFIX/include/snowflake_php.h" >"$WORK/php.h"
  php -d ffi.enable=1 -r '
    $f = FFI::load($argv[1]);
    $layout = $f->new("SnowflakeLayout*");
    if ($f->snowflake_layout_new("discord", FFI::addr($layout)) !== 0) exit(1);
    $parts = $f->new("SnowflakeParts");
    if ($f->snowflake_layout_decode($layout, 175928847299117063, FFI::addr($parts)) !== 0) exit(2);
    if ($parts->unix_ms !== 1462015105796 || $parts->fields[1] !== 1 || $parts->sequence !== 7) exit(3);
    $buf = $f->new("char[21]");
    if ($f->snowflake_encode(175928847299117063, "base62", false, $buf, 21) !== 0) exit(4);
    if (FFI::string($buf) !== "0Czks0tP37X") exit(5);
    if ($f->snowflake_status_code(3) !== "ERR_SNOWFLAKE_LAYOUT") exit(6);
    $f->snowflake_layout_free($layout);
    $c = FFI::cdef(preg_replace("/^#define .*$/m", "", file_get_contents($argv[1])), $argv[2]);
    if ($c->snowflake_version() !== $argv[3]) exit(7);
  ' "$WORK/php.h" "$LIBDIR/libsnowflake.so.$SOVERSION" "$VERSION"
}
# The CMake package takes the soname's view of compatibility: for 0.x, find_package(snowflake
# 0.Y) accepts only the same minor version.
cmake_version_follows_the_abi() {
  local dir=$WORK/cmake-version next_minor=$((MINOR + 1))
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(version_check C)
find_package(snowflake \${WANT} QUIET)
if(NOT snowflake_FOUND)
  message(FATAL_ERROR "not found")
endif()
EOF
  cmake -S "$dir" -B "$dir/ok" -DCMAKE_PREFIX_PATH="$PREFIX" -DWANT="$MAJOR.$MINOR" &&
    if [ "$MAJOR" = 0 ]; then
      ! cmake -S "$dir" -B "$dir/next" -DCMAKE_PREFIX_PATH="$PREFIX" -DWANT="0.$next_minor" &&
        { [ "$MINOR" = 0 ] || ! cmake -S "$dir" -B "$dir/prev" -DCMAKE_PREFIX_PATH="$PREFIX" -DWANT="0.0"; }
    fi
}
uninstall_removes_everything() {
  make -s -C ffi-c uninstall PREFIX="$PREFIX" && test -z "$(find "$PREFIX" -type f -o -type l)"
}

VERSION=$(sed -n 's/^#define SNOWFLAKE_VERSION "\(.*\)"/\1/p' include/snowflake.h)
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}
MINOR=${MINOR%%.*}
# The soname's version (cargo-c's rule, ffi-c/build.rs): major.minor for 0.x, else major.
SOVERSION=$MAJOR
if [ "$MAJOR" = 0 ]; then SOVERSION=$MAJOR.$MINOR; fi

check "cargo build --release -p snowflake-ffi" cargo build --release -p snowflake-ffi
check "libsnowflake leases from Redis through the redis crate (rustls for TLS)" bash -c \
  "cargo tree -q -p snowflake-ffi -e normal --prefix none | grep -q '^redis v' &&
   cargo tree -q -p snowflake-ffi -e normal --prefix none | grep -q '^rustls v'"
check "make -C ffi-c install PREFIX=<tmp>" make -s -C ffi-c install PREFIX="$PREFIX"
check "installed: libsnowflake.so.$VERSION (soname libsnowflake.so.$SOVERSION), .a, headers, .pc, CMake package" installed_layout

export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
LIBDIR=$(pkg-config --variable=libdir snowflake)
check "snowflake.h compiles as C99 (-std=c99 ${STRICT[*]})" \
  gcc -std=c99 "${STRICT[@]}" $(pkg-config --cflags snowflake) -c tests/c/header.c -o "$WORK/header.o"
check "snowflake.h compiles as C++11 and C++17 (${STRICT[*]})" bash -c "
  g++ -x c++ -std=c++11 ${STRICT[*]} $(pkg-config --cflags snowflake) -c tests/c/header.c -o $WORK/header11.o &&
  g++ -x c++ -std=c++17 ${STRICT[*]} $(pkg-config --cflags snowflake) -c tests/c/header.c -o $WORK/header17.o"

# Before C++17, snowflake.hpp stops at one clear line, not a cascade of string_view errors.
hpp_before_17() {
  local out
  out=$(printf '#include <snowflake.hpp>\n' | g++ -x c++ -std=c++14 $(pkg-config --cflags snowflake) -c - -o /dev/null 2>&1) && return 1
  grep -q 'snowflake.hpp needs C++17' <<<"$out" && [ "$(grep -c 'error' <<<"$out")" -le 2 ]
}
check "snowflake.hpp with -std=c++14: one #error that asks for C++17" hpp_before_17

check "test_api.c builds through pkg-config" \
  gcc -std=c99 "${STRICT[@]}" $(pkg-config --cflags snowflake libcjson) tests/c/test_api.c \
  -o "$WORK/test_api" $(pkg-config --libs snowflake libcjson) -pthread -Wl,-rpath,"$LIBDIR"
program "test_api: vectors, error paths, 8 threads x 200k IDs, fork" "$WORK/test_api" "$VECTORS"
program "test_api under valgrind (no leak, no invalid access)" \
  valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1 \
  --suppressions=tests/c/valgrind.supp \
  "$WORK/test_api" "$VECTORS"

check "test_redis_lease.c builds through pkg-config" \
  gcc -std=c99 "${STRICT[@]}" -DTEST_SERVERS_SERVE="\"$PWD/tests/servers/serve.py\"" \
  $(pkg-config --cflags snowflake libcjson) tests/c/test_redis_lease.c \
  -o "$WORK/test_redis_lease" $(pkg-config --libs snowflake libcjson) -Wl,-rpath,"$LIBDIR"
mkdir -p "$WORK/servers"
program "test_redis_lease: every form of Redis address against real servers (tests/servers)" \
  "$WORK/test_redis_lease" "$WORK/servers"

check "example.c builds through pkg-config" \
  gcc -std=c99 "${STRICT[@]}" $(pkg-config --cflags snowflake) tests/c/example.c -o "$WORK/example" \
  $(pkg-config --libs snowflake) -Wl,-rpath,"$LIBDIR"
check "example.c runs" prints "ERR_SNOWFLAKE_VALUE: worker = 99" "$WORK/example"
check "example.c: its public ID decodes back" prints "^public [0-9A-Za-z]\{11\}, decodes back: yes$" "$WORK/example"
check "example.c links libsnowflake.a statically (pkg-config static_libs)" \
  gcc -std=c99 "${STRICT[@]}" $(pkg-config --cflags snowflake) tests/c/example.c -o "$WORK/example_static" \
  $(pkg-config --variable=static_libs snowflake)
check "example_static runs without libsnowflake.so" bash -c \
  "$(declare -f no_libsnowflake_needed); no_libsnowflake_needed $WORK/example_static && $WORK/example_static"

check "PHP FFI::load / FFI::cdef read snowflake_php.h and call the library" php_ffi_reads_the_php_header
check "C++: [[nodiscard]] is enforced" nodiscard_is_enforced
check "C++: cmake finds the installed package" \
  cmake -S tests/cpp -B "$WORK/cpp" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release
check "C++: tests and examples build (-std=c++17 ${STRICT[*]})" cmake --build "$WORK/cpp" -j 2
program "test_cpp: vectors, exceptions, RAII, threads, double include" "$WORK/cpp/test_cpp" "$VECTORS"
check "C++: the README's example project (tests/cpp/example) builds as it stands" bash -c "
  cmake -S tests/cpp/example -B $WORK/example-cpp -DCMAKE_PREFIX_PATH=$PREFIX && cmake --build $WORK/example-cpp"
check "example.cpp runs (shared)" prints "ERR_SNOWFLAKE_VALUE: worker = 99" "$WORK/example-cpp/example"
check "example.cpp runs (static)" bash -c \
  "$(declare -f no_libsnowflake_needed); no_libsnowflake_needed $WORK/cpp/example_cpp_static && $WORK/cpp/example_cpp_static"

check "CMake: find_package(snowflake $MAJOR.$MINOR) finds it; another 0.x minor version does not" cmake_version_follows_the_abi
check "docs/c.md shows tests/c/example.c and tests/cpp/example/* verbatim" docs_show_the_tested_examples
check "make -C ffi-c uninstall removes every installed file" uninstall_removes_everything

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
