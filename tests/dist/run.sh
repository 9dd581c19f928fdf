#!/usr/bin/env bash
# The prebuilt packages in dist/ (scripts/dist.sh), installed the way users install them, each
# into a fresh place, with `cargo`, `rustc` and ~/.cargo/bin taken off the PATH (issue 11); and
# the glibc floor of every shipped binary (issue 17). Each install decodes the shared vectors
# (tests/vectors/), gives their public IDs and PostgreSQL SQL (issue 14), and issues IDs:
#
#   glibc     every ELF file in dist/ needs at most GLIBC_$GLIBC_FLOOR (scripts/dist.env);
#   Python    the wheel in new virtualenvs (pip --no-index: nothing is built or fetched), on
#             the oldest and newest CPython here too; the sdist built in another new
#             virtualenv with no network for Cargo (CARGO_NET_OFFLINE, an empty CARGO_HOME);
#             Rust is allowed there;
#   Node      a new npm project installs both tarballs with --ignore-scripts --offline, used
#             from CommonJS and from an ES module; the loader's error on a platform without
#             a prebuilt addon;
#   Bun, Deno the same project under Bun and Deno (.tools/js/, issue 43): the same checks,
#             JSON, error codes, a worker thread, Deno's --allow-ffi error, and one host
#             record shared by a Node, a Bun and a Deno process;
#   WebAssembly  @libsnowflake/wasm alone in a new npm project: the shared vectors and error
#             codes under Node, Bun, Deno and headless Chromium (tests/dist/wasm.sh);
#   PHP       a new Composer project requires libsnowflake/snowflake from an artifact
#             repository (dist/php/); the PHP CLI, and a real PHP-FPM preloading it with the
#             php.ini lines of docs/php.md, use the bundled library with no SNOWFLAKE_LIB;
#   C, C++    the tarball unpacked somewhere new: tests/c/test_api.c through pkg-config, the
#             static library, tests/cpp through the CMake package, bin/snowflake (tests/serve
#             whole against its `snowflake serve`, a short part against the .deb's), API.md; the
#             minimal static library (no leases) and the size of a static program against it;
#             the three .debs (runtime, -dev, -tools) checked with dpkg-deb and lintian,
#             installed into a scratch root, built against, removed.
#
# Prints the time from `pip install` / `npm install` to the first ID, and each package's
# size. Ends with `N passed, M failed`; exits non-zero on any failure. Run scripts/dist.sh
# first (scripts/check.sh does).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DIST=$ROOT/dist
VECTORS=$ROOT/tests/vectors
# shellcheck source=scripts/dist.env
. scripts/dist.env

WHEEL=$DIST/python/libsnowflake-$VERSION-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
SDIST=$DIST/python/libsnowflake-$VERSION.tar.gz
NPM_MAIN=$DIST/node/libsnowflake-$VERSION.tgz
NPM_PLATFORM=$DIST/node/libsnowflake-linux-x64-gnu-$VERSION.tgz
COMPOSER_ZIP=$DIST/php/libsnowflake-snowflake-$VERSION.zip
TARBALL_NAME=libsnowflake-$VERSION-x86_64-linux-gnu
TARBALL=$DIST/c/$TARBALL_NAME.tar.gz
DEB_RUNTIME=$DIST/c/libsnowflake${SOVERSION}_${VERSION}_amd64.deb
DEB_DEV=$DIST/c/libsnowflake-dev_${VERSION}_amd64.deb
DEB_TOOLS=$DIST/c/libsnowflake-tools_${VERSION}_amd64.deb
DEBS=("$DEB_RUNTIME" "$DEB_DEV" "$DEB_TOOLS")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-dist-test.XXXXXX")
chmod 755 "$WORK" # PHP-FPM's workers (user nobody when we are root) read the project here
FPM_PID=""
cleanup() {
  if [ -n "$FPM_PID" ]; then
    kill -TERM "$FPM_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$FPM_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$FPM_PID" 2>/dev/null
    wait "$FPM_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# check, program, says, section, no_rust, and this run's own SNOWFLAKE_SHM_DIR and TMPDIR:
# tests/dist/lib.sh (shared with tests/dist/platforms.sh).
# shellcheck source=tests/dist/lib.sh
. tests/dist/lib.sh

# --- C: the minimal static library (issue 29) ---------------------------------------------
# libsnowflake_minimal.a has no leases (no Redis client, no TLS): a static program against it
# (-static: glibc linked in too), with --gc-sections and stripped, is at most 1.5 MB; the same
# program against the full libsnowflake.a is measured beside it. The program is
# tests/c/hello_minimal.c.
MINIMAL_MAX_BYTES=$((1536 * 1024))
minimal_c() {
  section "C: libsnowflake_minimal.a (no leases)"
  local flags=(-std=c99 -Wall -Wextra -Werror -pedantic -O2 -ffunction-sections -fdata-sections -Wl,--gc-sections -s)
  local libdir=$C_PREFIX/lib
  # The node values from SNOWFLAKE_NODE (issue 28): the minimal library reads the environment.
  check "tests/c/hello_minimal.c links libsnowflake_minimal.a through pkg-config snowflake-minimal, and runs (SNOWFLAKE_NODE read)" bash -c "
    gcc ${flags[*]} \$(pkg-config --cflags snowflake-minimal) tests/c/hello_minimal.c -o '$WORK/hello_minimal' \
      \$(pkg-config --libs snowflake-minimal) && ! ldd '$WORK/hello_minimal' | grep -q libsnowflake &&
    out=\$(SNOWFLAKE_NODE=datacenter=2,worker=3 PATH='$NORUST_PATH' '$WORK/hello_minimal') && echo \"\$out\" &&
    grep -qF 'lease=local: ERR_SNOWFLAKE_VALUE (option \`lease\`: libsnowflake_minimal has no leases: link libsnowflake)' <<<\"\$out\" &&
    grep -qxF 'from the environment: worker=3 (layout=code;node=SNOWFLAKE_NODE)' <<<\"\$out\""
  # Fully static (glibc too), with docs/c.md's command: pkg-config --static names no -lgcc_s,
  # which has no static form (gcc links its static unwinder itself).
  check "the same program -static against libsnowflake_minimal.a (pkg-config --static, as docs/c.md) and against libsnowflake.a" bash -c "
    grep -qF 'cc -std=c99 -static app.c -o app \$(pkg-config --cflags --static --libs snowflake-minimal)' docs/c.md &&
    ! pkg-config --static --libs snowflake-minimal | grep -q -- -lgcc_s &&
    gcc ${flags[*]} -static tests/c/hello_minimal.c -o '$WORK/hello_minimal_static' \
      \$(pkg-config --cflags --static --libs snowflake-minimal) 2>/dev/null &&
    gcc ${flags[*]} -static -I'$C_PREFIX/include' tests/c/hello_minimal.c -o '$WORK/hello_full_static' \
      '$libdir/libsnowflake.a' -lpthread -ldl -lm 2>/dev/null &&
    gcc ${flags[*]} -I'$C_PREFIX/include' tests/c/hello_minimal.c -o '$WORK/hello_full' '$libdir/libsnowflake.a' -lpthread -ldl -lm &&
    PATH='$NORUST_PATH' '$WORK/hello_minimal_static' | grep -q '^lease=local: ERR_SNOWFLAKE_VALUE' &&
    PATH='$NORUST_PATH' '$WORK/hello_full_static' | grep -q '^id '"
  local small big small_dyn big_dyn
  small=$(stat -c %s "$WORK/hello_minimal_static" 2>/dev/null || echo 0)
  big=$(stat -c %s "$WORK/hello_full_static" 2>/dev/null || echo 0)
  small_dyn=$(stat -c %s "$WORK/hello_minimal" 2>/dev/null || echo 0)
  big_dyn=$(stat -c %s "$WORK/hello_full" 2>/dev/null || echo 0)
  echo "     stripped, --gc-sections, -static: $small bytes against libsnowflake_minimal.a, $big against libsnowflake.a"
  echo "     stripped, --gc-sections, glibc shared: $small_dyn bytes against libsnowflake_minimal.a, $big_dyn against libsnowflake.a"
  check "the minimal static program (-static) is at most 1.5 MB: $small bytes (the full one: $big)" \
    test "$small" -gt 0 -a "$small" -le "$MINIMAL_MAX_BYTES" -a "$small" -lt "$big"
  check "C++: CMake's snowflake::minimal target links tests/cpp/example against libsnowflake_minimal.a" bash -c "
    mkdir -p '$WORK/cmake-minimal' && cp tests/cpp/example/example.cpp '$WORK/cmake-minimal/' &&
    printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(m CXX)' 'set(CMAKE_CXX_STANDARD 17)' \
      'find_package(snowflake 0.1 REQUIRED)' 'add_executable(example example.cpp)' \
      'target_link_libraries(example PRIVATE snowflake::minimal)' >'$WORK/cmake-minimal/CMakeLists.txt' &&
    cmake -S '$WORK/cmake-minimal' -B '$WORK/cmake-minimal/build' -DCMAKE_PREFIX_PATH='$C_PREFIX' >/dev/null &&
    cmake --build '$WORK/cmake-minimal/build' >/dev/null &&
    PATH='$NORUST_PATH' '$WORK/cmake-minimal/build/example' | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99'"
}

# --- C: the .debs (issue 29: Debian's split) -------------------------------------------------
# libsnowflake<soversion> (the runtime, named after the soname), libsnowflake-dev and
# libsnowflake-tools, each with the right dependencies, lintian without errors, installed
# together into a scratch root, built against, and removed.
debs() {
  local lib=./usr/lib/x86_64-linux-gnu runtime=libsnowflake$SOVERSION
  section "C: $(basename "$DEB_RUNTIME"), $(basename "$DEB_DEV"), $(basename "$DEB_TOOLS")"
  deb_fields() {
    local deb pkg
    for deb in "${DEBS[@]}"; do
      dpkg-deb --field "$deb" Package Version Architecture Depends || return 1
      test "$(dpkg-deb --field "$deb" Version)" = "$VERSION" && test "$(dpkg-deb --field "$deb" Architecture)" = amd64 &&
        dpkg-deb --field "$deb" Depends | grep -q "libc6 (>= $GLIBC_FLOOR)" || return 1
    done
    test "$(dpkg-deb --field "$DEB_RUNTIME" Package)" = "$runtime" &&
      test "$(dpkg-deb --field "$DEB_DEV" Package)" = libsnowflake-dev &&
      test "$(dpkg-deb --field "$DEB_TOOLS" Package)" = libsnowflake-tools &&
      dpkg-deb --field "$DEB_DEV" Depends | grep -qF "$runtime (= $VERSION)" &&
      dpkg-deb --field "$DEB_RUNTIME" Section | grep -qx libs &&
      dpkg-deb --field "$DEB_DEV" Section | grep -qx libdevel &&
      dpkg-deb -I "$DEB_RUNTIME" shlibs | grep -qxF "libsnowflake $SOVERSION $runtime (>= $VERSION)"
  }
  check "dpkg-deb --field: $runtime, libsnowflake-dev (Depends $runtime (= $VERSION)), libsnowflake-tools; libc6 (>= $GLIBC_FLOOR); shlibs" deb_fields
  deb_contents() {
    local deb f
    for deb in "${DEBS[@]}"; do
      dpkg-deb --contents "$deb" | awk '{ print $6 ($7 ? " " $7 " " $8 : "") }' >"$WORK/$(basename "$deb").contents"
      # Everything under /usr, but the tools' systemd unit: Debian 12 ships units in /lib
      # (lintian's systemd-service-file-outside-lib).
      ! grep -v '^\./usr/' "$WORK/$(basename "$deb").contents" | grep -v '^\./lib/\(systemd/\(system/\(snowflake-serve\.service\)\?\)\?\)\?$' |
        grep -qv '^\./$' || { echo "outside /usr: $deb"; return 1; }
    done
    for f in "$DEB_RUNTIME:$lib/libsnowflake.so.$VERSION" "$DEB_RUNTIME:$lib/libsnowflake.so.$SOVERSION -> libsnowflake.so.$VERSION" \
      "$DEB_RUNTIME:./usr/share/doc/$runtime/copyright" "$DEB_RUNTIME:./usr/share/doc/$runtime/changelog.gz" \
      "$DEB_DEV:$lib/libsnowflake.so -> libsnowflake.so.$SOVERSION" "$DEB_DEV:$lib/libsnowflake.a" \
      "$DEB_DEV:$lib/libsnowflake_minimal.a" "$DEB_DEV:$lib/pkgconfig/snowflake.pc" "$DEB_DEV:$lib/pkgconfig/snowflake-minimal.pc" \
      "$DEB_DEV:$lib/cmake/snowflake/snowflake-config.cmake" "$DEB_DEV:$lib/cmake/snowflake/snowflake-config-version.cmake" \
      "$DEB_DEV:./usr/include/snowflake.h" "$DEB_DEV:./usr/include/snowflake.hpp" "$DEB_DEV:./usr/include/snowflake_php.h" \
      "$DEB_DEV:./usr/share/doc/libsnowflake-dev/API.md" "$DEB_TOOLS:./usr/bin/snowflake" \
      "$DEB_TOOLS:./lib/systemd/system/snowflake-serve.service"; do
      grep -qxF "${f#*:}" "$WORK/$(basename "${f%%:*}").contents" || { echo "missing from $(basename "${f%%:*}"): ${f#*:}"; return 1; }
    done
    ! grep -q 'bin/snowflake' "$WORK/$(basename "$DEB_DEV").contents" "$WORK/$(basename "$DEB_RUNTIME").contents" &&
      ! grep -q 'include/' "$WORK/$(basename "$DEB_RUNTIME").contents"
  }
  check "dpkg-deb --contents: the runtime holds the library, -dev the headers, links, .a files, pkg-config, CMake and API.md, -tools the CLI and snowflake serve's systemd unit" deb_contents
  deb_lintian() {
    local deb out errors=0
    for deb in "${DEBS[@]}"; do
      out=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v "^running with root privileges")
      echo "lintian $(basename "$deb"):"
      printf '%s\n' "${out:-(nothing)}" | sed 's/^/  /'
      if printf '%s\n' "$out" | grep -q '^E: '; then errors=1; fi
    done
    return $errors
  }
  check "lintian: no errors in any of the three" deb_lintian
  grep -E '^(lintian|  [EWIP]:)' "$WORK/log" | sed 's/^/     /'

  DEB_ROOT=$WORK/scratch-root
  deb_installs() {
    mkdir -p "$DEB_ROOT/var/lib/dpkg/info" "$DEB_ROOT/var/lib/dpkg/updates" "$DEB_ROOT/var/lib/dpkg/triggers" &&
      touch "$DEB_ROOT/var/lib/dpkg/status" "$DEB_ROOT/var/lib/dpkg/available" &&
      # The scratch root has no libc6 package of its own: its dependency is the host's.
      dpkg --root="$DEB_ROOT" --force-depends --force-not-root --force-script-chrootless -i "${DEBS[@]}" &&
      for pkg in "$runtime" libsnowflake-dev libsnowflake-tools; do
        dpkg --root="$DEB_ROOT" -s "$pkg" | grep -q '^Status: install ok installed' || return 1
      done &&
      test -x "$DEB_ROOT/usr/bin/snowflake"
  }
  check "dpkg --root=<scratch> -i installs the three" deb_installs
  # Every function the installed header declares (the environment's constructor, the UUIDv7
  # view, a field by name among them) links from the runtime library and from both static
  # ones: a program that takes the address of each is built against each.
  deb_api() {
    local lib=$DEB_ROOT/usr/lib/x86_64-linux-gnu inc=$DEB_ROOT/usr/include fns fn want
    fns=$(grep -o '\bsnowflake_[a-z_0-9]*(' "$inc/snowflake.h" | tr -d '(' | sort -u)
    for want in snowflake_generator_from_env snowflake_generator_sources snowflake_generator_layout \
      snowflake_layout_to_uuid snowflake_layout_from_uuid snowflake_layout_field_value; do
      grep -qx "$want" <<<"$fns" || { echo "snowflake.h lacks $want"; return 1; }
    done
    {
      printf '#include <stdio.h>\n#include <snowflake.h>\ntypedef void (*fn)(void);\nint main(void) {\n  fn all[] = {\n'
      for fn in $fns; do printf '    (fn)%s,\n' "$fn"; done
      printf '  };\n  printf("%%u functions\\n", (unsigned)(sizeof all / sizeof all[0]));\n  return 0;\n}\n'
    } >"$WORK/every_function.c"
    gcc -std=c99 -I"$inc" "$WORK/every_function.c" -o "$WORK/every_so" -L"$lib" -lsnowflake &&
      LD_LIBRARY_PATH=$lib no_rust "$WORK/every_so" &&
      gcc -std=c99 -I"$inc" "$WORK/every_function.c" -o "$WORK/every_a" "$lib/libsnowflake.a" -lpthread -ldl -lm &&
      no_rust "$WORK/every_a" &&
      gcc -std=c99 -I"$inc" "$WORK/every_function.c" -o "$WORK/every_minimal" "$lib/libsnowflake_minimal.a" -lpthread -ldl -lm &&
      no_rust "$WORK/every_minimal"
  }
  check "the header's every function (snowflake_generator_from_env, _sources, the UUID view, field_value...) links from the runtime .so, libsnowflake.a and libsnowflake_minimal.a" deb_api
  deb_is_usable() {
    local pc=$DEB_ROOT/usr/lib/x86_64-linux-gnu/pkgconfig
    # pkg-config's sysroot: the .pc says /usr, which lives under the scratch root here (and
    # would drop /usr/include and /usr/lib as system directories, unless told not to).
    local pkg=(env PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_SYSROOT_DIR="$DEB_ROOT"
      PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 pkg-config)
    gcc -std=c99 -Wall -Wextra -Werror -pedantic $("${pkg[@]}" --cflags snowflake) tests/c/example.c \
      -o "$WORK/example_deb" $("${pkg[@]}" --libs snowflake) &&
      LD_LIBRARY_PATH=$DEB_ROOT/usr/lib/x86_64-linux-gnu no_rust "$WORK/example_deb" | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99' &&
      gcc -std=c99 $("${pkg[@]}" --cflags snowflake-minimal) tests/c/hello_minimal.c -o "$WORK/hello_deb" \
        $("${pkg[@]}" --libs snowflake-minimal) && no_rust "$WORK/hello_deb" | grep -q '^id ' &&
      SNOWFLAKE_NODE=datacenter=2,worker=5 no_rust "$WORK/hello_deb" | grep -qxF 'from the environment: worker=5 (layout=code;node=SNOWFLAKE_NODE)' &&
      cmake -S tests/cpp/example -B "$WORK/example-deb-cmake" -DCMAKE_PREFIX_PATH="$DEB_ROOT/usr" >/dev/null &&
      cmake --build "$WORK/example-deb-cmake" >/dev/null &&
      no_rust "$WORK/example-deb-cmake/example" | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99' &&
      no_rust "$DEB_ROOT/usr/bin/snowflake" --help | grep -q '^Usage: snowflake <COMMAND>'
  }
  check "installed: example.c through pkg-config, hello_minimal.c through snowflake-minimal, the CMake example, /usr/bin/snowflake --help" deb_is_usable
  check "snowflake serve from the .deb's /usr/bin/snowflake: IDs, decode, layout, readyz, metrics (tests/serve's clients test), TLS, SIGTERM" \
    serve_tests "$DEB_ROOT/usr/bin/snowflake" -k "test_clients_curl_python_node or test_tls or test_sigterm_drains"
  serve_summary
  deb_removes() {
    dpkg --root="$DEB_ROOT" --force-not-root --force-script-chrootless -r libsnowflake-tools libsnowflake-dev "$runtime" &&
      test -z "$(find "$DEB_ROOT/usr" -type f -o -type l 2>/dev/null)"
  }
  check "dpkg -r removes every file the three installed" deb_removes
}

# --- the packages ----------------------------------------------------------------------------
section "dist/ (version $VERSION)"
check "scripts/dist.sh wrote all 10 packages of version $VERSION" \
  files_there "$WHEEL" "$SDIST" "$NPM_MAIN" "$NPM_PLATFORM" "$DIST/node/libsnowflake-wasm-$VERSION.tgz" "$COMPOSER_ZIP" "$TARBALL" "${DEBS[@]}"
stop_if_failed
check "the install tests' PATH has no cargo or rustc" rust_is_gone
docs_state_the_floor() {
  local page ok=0
  for page in README.md docs/python.md docs/node.md docs/php.md docs/c.md docs/cli.md; do
    grep -q "glibc $GLIBC_FLOOR or later" "$page" || { echo "$page does not say: glibc $GLIBC_FLOOR or later"; ok=1; }
  done
  return $ok
}
check "README.md and every docs/ page say which systems the packages support (glibc $GLIBC_FLOOR or later)" docs_state_the_floor

# --- glibc floor -----------------------------------------------------------------------------
# Seven glibc binaries a glibc platform (the wheel's, the .node, the Composer package's, the
# tarball's library and CLI, the .deb's), five musl ones for musl (no .deb).
GLIBC_BINARIES=7
MUSL_BINARIES=0
[[ " $DIST_PLATFORMS " != *" aarch64-linux-gnu "* ]] || GLIBC_BINARIES=14
[[ " $DIST_PLATFORMS " != *" x86_64-linux-musl "* ]] || MUSL_BINARIES=5
section "glibc: every shipped binary within GLIBC_$GLIBC_FLOOR"
check "wheel, .node, Composer .so, tarball .so and CLI, .deb .so and CLI: at most GLIBC_$GLIBC_FLOOR, no unversioned libc symbol" \
  python3 tests/dist/glibc_floor.py "$DIST" "$GLIBC_FLOOR" --expect "$GLIBC_BINARIES" --expect-musl "$MUSL_BINARIES"
cat "$WORK/log" | grep -E '^(ok|FAIL) +(GLIBC|musl)' | sed 's/^/     /'
# The check can fail: below the floor the same binaries are refused, and so is a library
# with an undefined symbol that has no version.
floor_check_fails() {
  local fake=$WORK/fake-dist
  mkdir -p "$fake/c" "$fake/lib"
  printf 'extern void not_in_any_library(void);\nvoid f(void) { not_in_any_library(); }\n' >"$fake/x.c"
  gcc -shared -fPIC -o "$fake/lib/libloose.so" "$fake/x.c" || return 1
  tar -C "$fake" -czf "$fake/c/loose.tar.gz" lib
  rm -rf "$fake/lib" "$fake/x.c"
  ! python3 tests/dist/glibc_floor.py "$DIST" 2.16 >"$WORK/below" &&
    grep -q "FAIL GLIBC_$GLIBC_FLOOR" "$WORK/below" &&
    ! python3 tests/dist/glibc_floor.py "$fake" 99.0 >"$WORK/loose" &&
    grep -q "without a version: not_in_any_library" "$WORK/loose"
}
check "the check fails below the floor, and on an unversioned undefined symbol" floor_check_fails

# --- Python ----------------------------------------------------------------------------------
section "Python: $(basename "$WHEEL")"
PY_T0=0
PY_MS=""
wheel_installs() {
  python3 -m venv "$WORK/py-wheel" || return 1
  PY_T0=$(now_ms)
  no_rust "$WORK/py-wheel/bin/pip" install --quiet --no-index "$WHEEL" &&
    (cd "$WORK" && no_rust "$WORK/py-wheel/bin/python" -c 'import libsnowflake; libsnowflake.Generator().next_id()') &&
    PY_MS=$(($(now_ms) - PY_T0))
}
check "a new virtualenv installs the wheel (pip install --no-index, no Rust)" wheel_installs
[ -n "$PY_MS" ] && echo "     pip install to the first ID: $PY_MS ms"
check "the wheel's Python decodes the shared vectors and issues IDs" \
  says "^ok $VERSION [0-9]+ vectors, 10000 IDs from $WORK/py-wheel/" \
  bash -c "cd '$WORK' && PATH='$NORUST_PATH' '$WORK/py-wheel/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"
# abi3: one wheel for every CPython >= 3.9; the oldest and newest this machine has get it too.
other_pythons=()
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
  [ -x "$py" ] && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null && other_pythons+=("$py")
done
if [ ${#other_pythons[@]} -gt 0 ]; then
  mapfile -t sorted < <(for py in "${other_pythons[@]}"; do echo "$("$py" -c 'import sys; print("%d.%03d" % sys.version_info[:2])') $py"; done | sort)
  for entry in "${sorted[0]}" "${sorted[${#sorted[@]}-1]}"; do
    py=${entry#* }
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ -d "$WORK/py-$v" ] && continue
    check "the wheel on CPython $v: installs and passes check.py" bash -c "
      '$py' -m venv '$WORK/py-$v' && PATH='$NORUST_PATH' '$WORK/py-$v/bin/pip' install --quiet --no-index '$WHEEL' &&
      cd '$WORK' && PATH='$NORUST_PATH' '$WORK/py-$v/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"
  done
fi

section "Python: $(basename "$SDIST") (built from source, offline)"
sdist_builds_offline() {
  local home=$WORK/cargo-home
  mkdir -p "$home"
  python3 -m venv "$WORK/py-sdist" &&
    # The build backend from PyPI, as pip's build isolation would fetch it; then the build
    # itself with nothing to fetch: no index, no Cargo network, no Cargo cache.
    "$WORK/py-sdist/bin/pip" install --quiet "maturin>=1.5,<2" &&
    # What is checked is that the sdist builds offline and works, not how fast its code runs:
    # cargo's CARGO_PROFILE_RELEASE_* variables build it unoptimised, without the LTO and the
    # single codegen unit of its Cargo.toml (74 s here, against 132 s).
    PATH="$WORK/py-sdist/bin:$HOME/.cargo/bin:$PATH" CARGO_HOME=$home RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_NET_OFFLINE=true \
      CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 \
      "$WORK/py-sdist/bin/pip" install --quiet --no-index --no-build-isolation "$SDIST" &&
    test ! -e "$home/registry" && test ! -e "$home/git"
}
check "a new virtualenv builds the sdist with CARGO_NET_OFFLINE=true and an empty CARGO_HOME" sdist_builds_offline
check "the sdist's build decodes the shared vectors and issues IDs" \
  says "^ok $VERSION [0-9]+ vectors, 10000 IDs from $WORK/py-sdist/" \
  bash -c "cd '$WORK' && '$WORK/py-sdist/bin/python' '$ROOT/tests/dist/check.py' '$VECTORS' '$VERSION'"

# --- Node ------------------------------------------------------------------------------------
section "Node: $(basename "$NPM_MAIN"), $(basename "$NPM_PLATFORM")"
NODE_PROJECT=$WORK/node-project
NODE_MS=""
manifests_are_napi_rs() {
  node - "$NPM_MAIN" "$NPM_PLATFORM" "$VERSION" $(for p in x86_64-linux-gnu $DIST_PLATFORMS; do echo "${NAPI_NAME[$p]}"; done) <<'JS'
const { execFileSync } = require('node:child_process');
const assert = require('node:assert/strict');
const [main, platform, version, ...platforms] = process.argv.slice(2);
const manifest = (tgz) => JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }));
const list = (tgz) => execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).trim().split('\n').sort();
const m = manifest(main);
assert.equal(m.name, 'libsnowflake');
assert.equal(m.version, version);
assert.deepEqual(m.optionalDependencies, Object.fromEntries(platforms.map((n) => [`@libsnowflake/${n}`, version])));
for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal((m.scripts || {})[s], undefined, s);
assert.ok(!list(main).some((f) => f.endsWith('.node')), 'the main package carries no addon');
const p = manifest(platform);
assert.equal(p.name, '@libsnowflake/linux-x64-gnu');
assert.equal(p.version, version);
assert.deepEqual([p.os, p.cpu, p.libc], [['linux'], ['x64'], ['glibc']]);
assert.equal(p.main, 'libsnowflake.linux-x64-gnu.node');
assert.ok(list(platform).includes('package/libsnowflake.linux-x64-gnu.node'));
JS
}
check "libsnowflake lists every platform's package (@libsnowflake/linux-x64-gnu@$VERSION, ...) as optional, has no install script; the platform package holds the addon" \
  manifests_are_napi_rs
npm_installs() {
  mkdir -p "$NODE_PROJECT" &&
    echo '{ "name": "consumer", "version": "1.0.0", "private": true }' >"$NODE_PROJECT/package.json" &&
    cp tests/dist/vectors.cjs tests/dist/check.cjs tests/dist/check.mjs "$NODE_PROJECT/" || return 1
  local t0
  t0=$(now_ms)
  (cd "$NODE_PROJECT" &&
    no_rust npm install --ignore-scripts --offline --no-audit --no-fund --loglevel=error "$NPM_MAIN" "$NPM_PLATFORM" &&
    no_rust node -e "new (require('libsnowflake').Generator)({ layout: 'twitter' }).nextId()") &&
    NODE_MS=$(($(now_ms) - t0))
}
check "a new npm project installs both tarballs (npm install --ignore-scripts --offline, no Rust)" npm_installs
[ -n "$NODE_MS" ] && echo "     npm install to the first ID: $NODE_MS ms"
check "CommonJS: require('libsnowflake') decodes the shared vectors and issues IDs" \
  says "^ok cjs $VERSION [0-9]+ vectors, 10000 IDs from $NODE_PROJECT/node_modules/libsnowflake/index.js" \
  bash -c "cd '$NODE_PROJECT' && PATH='$NORUST_PATH' node check.cjs '$VECTORS' '$VERSION'"
check "ES module: import from 'libsnowflake' decodes the shared vectors and issues IDs" \
  says "^ok esm $VERSION [0-9]+ vectors, 10000 IDs from file://$NODE_PROJECT/node_modules/libsnowflake/index.mjs" \
  bash -c "cd '$NODE_PROJECT' && PATH='$NORUST_PATH' node check.mjs '$VECTORS' '$VERSION'"
other_platform_is_told() {
  printf "Object.defineProperty(process, 'arch', { value: 'riscv64' });\n" >"$WORK/riscv.cjs"
  (cd "$NODE_PROJECT" && no_rust node -r "$WORK/riscv.cjs" -e "
    try { require('libsnowflake'); } catch (e) { console.log(e.code + ': ' + e.message); process.exit(0); }
    process.exit(1);") >"$WORK/err" || return 1
  cat "$WORK/err"
  grep -q '^ERR_SNOWFLAKE_NO_ADDON: .*(linux-riscv64-gnu).*npm run build' "$WORK/err"
}
check "on a platform without a prebuilt addon, require() names the platform and how to build from source" \
  other_platform_is_told

# --- Bun and Deno (issue 43) ---------------------------------------------------------------
# The same installed project under the other runtimes that load Node-API addons, from
# scripts/install-deps.sh's .tools/js/: Bun runs check.cjs and check.mjs as they are; Deno
# runs them as docs/node.md says, from the project's node_modules (Deno's default where a
# package.json is), with only the permissions the package needs (--allow-read, --allow-ffi);
# tests/dist/runtime.mjs adds the JSON helpers, error codes, nextIdAsync and a worker thread;
# tests/dist/host_record.cjs puts a Node, a Bun and a Deno process on one identity at once.
BUN=$ROOT/.tools/js/bun
DENO=$ROOT/.tools/js/deno
export DENO_DIR=$WORK/deno-dir DENO_NO_UPDATE_CHECK=1
in_project() { (cd "$NODE_PROJECT" && env PATH="$NORUST_PATH" NO_COLOR=1 "$@"); }
DENO_RUN=("$DENO" run --allow-read --allow-ffi)
section "Bun $("$BUN" --version 2>/dev/null || echo missing), $("$DENO" --version 2>/dev/null | head -1 || echo 'Deno missing')"
RT_T0=$(now_ms)
check "Bun and Deno are installed (.tools/js/: scripts/install-deps.sh)" test -x "$BUN" -a -x "$DENO"
cp tests/dist/runtime.mjs tests/dist/host_record.cjs "$NODE_PROJECT/"
check "Bun, CommonJS: check.cjs decodes the shared vectors and issues IDs" \
  says "^ok cjs $VERSION [0-9]+ vectors, 10000 IDs from $NODE_PROJECT/node_modules/libsnowflake/index.js" \
  in_project "$BUN" check.cjs "$VECTORS" "$VERSION"
check "Bun, ES module: check.mjs decodes the shared vectors and issues IDs" \
  says "^ok esm $VERSION [0-9]+ vectors, 10000 IDs from file://$NODE_PROJECT/node_modules/libsnowflake/index.mjs" \
  in_project "$BUN" check.mjs "$VECTORS" "$VERSION"
check "Bun: JSON helpers, error codes, nextIdAsync, a worker thread on the main thread's identity (runtime.mjs)" \
  says "^ok runtime bun [0-9.]+: json, 4 error codes, nextIdAsync, a worker thread with 20000 IDs, 0 repeats$" \
  in_project "$BUN" runtime.mjs
check "Deno, CommonJS: deno run --allow-read --allow-ffi check.cjs (the project's node_modules)" \
  says "^ok cjs $VERSION [0-9]+ vectors, 10000 IDs from $NODE_PROJECT/node_modules/libsnowflake/index.js" \
  in_project "${DENO_RUN[@]}" check.cjs "$VECTORS" "$VERSION"
check "Deno, ES module: deno run --allow-read --allow-ffi check.mjs (the project's node_modules)" \
  says "^ok esm $VERSION [0-9]+ vectors, 10000 IDs from file://$NODE_PROJECT/node_modules/libsnowflake/index.mjs" \
  in_project "${DENO_RUN[@]}" check.mjs "$VECTORS" "$VERSION"
check "Deno: JSON helpers, error codes, nextIdAsync, a worker thread on the main thread's identity (runtime.mjs)" \
  says "^ok runtime deno [0-9.]+: json, 4 error codes, nextIdAsync, a worker thread with 20000 IDs, 0 repeats$" \
  in_project "${DENO_RUN[@]}" runtime.mjs
# Deno without --allow-ffi: the loader's ERR_SNOWFLAKE_NO_ADDON, naming the permission.
deno_without_ffi() {
  printf '%s\n' "try { (await import('libsnowflake')).VERSION; } catch (e) { console.log(e.code + ': ' + e.message); Deno.exit(0); }" \
    'Deno.exit(1);' >"$NODE_PROJECT/no_ffi.mjs"
  in_project "$DENO" run --allow-read no_ffi.mjs >"$WORK/err" || return 1
  cat "$WORK/err"
  grep -q '^ERR_SNOWFLAKE_NO_ADDON: .*--allow-ffi' "$WORK/err"
}
check "Deno without --allow-ffi: import('libsnowflake') throws ERR_SNOWFLAKE_NO_ADDON naming --allow-ffi" deno_without_ffi
# One host record, three runtimes: a Node, a Bun and a Deno process of the same node values,
# started together, each waiting (for the file go) until all three hold their generator. While
# they hold it, a Bun process asking the same identity with another policy is refused; then
# all three issue at once, and no ID repeats among the 3 x 100,000.
host_record() {
  local dir=$WORK/host-record n=100000 pids=() r i
  mkdir -p "$dir" || return 1
  in_project node host_record.cjs "$dir/node.ids" "$dir/node.ready" "$dir/go" "$n" &
  pids+=($!)
  in_project "$BUN" host_record.cjs "$dir/bun.ids" "$dir/bun.ready" "$dir/go" "$n" &
  pids+=($!)
  in_project "${DENO_RUN[@]}" --allow-write="$dir" host_record.cjs "$dir/deno.ids" "$dir/deno.ready" "$dir/go" "$n" &
  pids+=($!)
  for i in $(seq 300); do
    [ -f "$dir/node.ready" ] && [ -f "$dir/bun.ready" ] && [ -f "$dir/deno.ready" ] && break
    for r in "${pids[@]}"; do kill -0 "$r" 2>/dev/null || break 2; done
    sleep 0.1
  done
  local refused=0
  if [ -f "$dir/node.ready" ] && [ -f "$dir/bun.ready" ] && [ -f "$dir/deno.ready" ]; then
    cat "$dir"/*.ready
    in_project "$BUN" -e "
      const { Generator } = require('libsnowflake');
      try { new Generator({ layout: 'twitter', node: { datacenter: 2, worker: 7 }, maxDriftMs: 5 }); }
      catch (e) { console.log(e.code + ': ' + e.message); process.exit(0); }
      process.exit(1);" >"$dir/refusal" 2>&1 && grep -q '^ERR_SNOWFLAKE_SHARED_MISMATCH: ' "$dir/refusal" || refused=1
    cat "$dir/refusal"
  else
    echo "not every process became ready"
    refused=1
  fi
  touch "$dir/go"
  local status=0
  for r in "${pids[@]}"; do wait "$r" || status=1; done
  [ "$status" -eq 0 ] && [ "$refused" -eq 0 ] || return 1
  wc -l "$dir"/*.ids
  local total unique
  total=$(cat "$dir"/*.ids | wc -l)
  unique=$(cat "$dir"/*.ids | sort -u | wc -l)
  echo "$total IDs, $unique distinct"
  [ "$total" -eq $((3 * n)) ] && [ "$unique" -eq "$total" ]
}
check "one identity in a Node, a Bun and a Deno process at once: another policy is refused (ERR_SNOWFLAKE_SHARED_MISMATCH); 3 x 100,000 IDs, 0 repeats" host_record
grep -E '^(ERR_|[0-9]+ IDs)' "$WORK/log" | sed 's/^/     /'
echo "     Bun and Deno checks: $(($(now_ms) - RT_T0)) ms"

# --- WebAssembly (issue 43) -------------------------------------------------------------------
# shellcheck source=tests/dist/wasm.sh
. tests/dist/wasm.sh

# --- PHP -------------------------------------------------------------------------------------
section "PHP: $(basename "$COMPOSER_ZIP")"
PHP_PROJECT=$WORK/php-project
PACKAGE=$PHP_PROJECT/vendor/libsnowflake/snowflake
BUNDLED=$PACKAGE/lib/x86_64-linux-gnu/libsnowflake.so
composer_requires() {
  mkdir -p "$PHP_PROJECT" &&
    # Packagist is not reachable here, and not needed: the artifact repository is dist/php/.
    cat >"$PHP_PROJECT/composer.json" <<EOF &&
{
    "name": "test/consumer",
    "repositories": [{ "type": "artifact", "url": "$DIST/php/" }, { "packagist.org": false }]
}
EOF
    (cd "$PHP_PROJECT" && no_rust env COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_HOME="$WORK/composer-home" \
      COMPOSER_CACHE_DIR="$WORK/composer-cache" composer require --no-interaction libsnowflake/snowflake) &&
    test -f "$BUNDLED" && test -f "$PACKAGE/include/snowflake_php.h" &&
    grep -q "\"libsnowflake/snowflake\": \"^$VERSION\"" "$PHP_PROJECT/composer.json" &&
    chmod -R a+rX "$PHP_PROJECT"
}
check "a new Composer project: composer require libsnowflake/snowflake from the artifact repository dist/php/" composer_requires
check "PHP CLI: the bundled library (no SNOWFLAKE_LIB) decodes the shared vectors and issues IDs" \
  says "^ok cli cdef $VERSION [0-9]+ vectors, 10000 IDs, library $BUNDLED$" \
  bash -c "cd '$PHP_PROJECT' && PATH='$NORUST_PATH' php '$ROOT/tests/dist/check.php' '$PHP_PROJECT' '$VECTORS' '$VERSION'"

# PHP-FPM preloading the package with the php.ini lines of vendor/bin/snowflake-preload-header
# --ini: the header from bin/snowflake-preload-header (its FFI_LIB the bundled library),
# preload.php from vendor/.
FPM_DIR=$WORK/fpm
fpm_serves() {
  local fpm user=www-data pool_user=""
  fpm=$(command -v php-fpm8.2 || command -v php-fpm) || { echo "php-fpm8.2 is missing (scripts/install-deps.sh)"; return 1; }
  command -v cgi-fcgi >/dev/null || { echo "cgi-fcgi is missing (libfcgi-bin, scripts/install-deps.sh)"; return 1; }
  mkdir -m 755 "$FPM_DIR" && mkdir -m 700 "$FPM_DIR/shm" || return 1
  (cd "$PHP_PROJECT" && no_rust php vendor/libsnowflake/snowflake/bin/snowflake-preload-header) >"$FPM_DIR/snowflake.h" || return 1
  chmod 644 "$FPM_DIR/snowflake.h"
  grep -qx "#define FFI_LIB \"$BUNDLED\"" "$FPM_DIR/snowflake.h" || { head -3 "$FPM_DIR/snowflake.h"; return 1; }
  if [ "$(id -u)" = 0 ]; then
    user=nobody
    chown nobody:nogroup "$FPM_DIR/shm"
    pool_user=$'user = nobody\ngroup = nogroup'
  fi
  # php.ini: the lines that Composer's vendor/bin/snowflake-preload-header prints for this
  # install (issue 29), as they are.
  (cd "$PHP_PROJECT" && no_rust vendor/bin/snowflake-preload-header --ini --header="$FPM_DIR/snowflake.h" --user="$user") >"$FPM_DIR/php.ini" || return 1
  grep -q "^opcache.preload = $PACKAGE/preload.php$" "$FPM_DIR/php.ini" && grep -q "^ffi.enable = preload$" "$FPM_DIR/php.ini" &&
    grep -q "^opcache.preload_user = $user$" "$FPM_DIR/php.ini" && test -f "$PACKAGE/README.md" &&
    grep -q 'snowflake-preload-header --ini' "$PACKAGE/README.md" || { cat "$FPM_DIR/php.ini"; return 1; }
  cat >"$FPM_DIR/fpm.conf" <<EOF
[global]
error_log = $FPM_DIR/fpm.log
pid = $FPM_DIR/fpm.pid
daemonize = no
[www]
$pool_user
listen = $FPM_DIR/fpm.sock
listen.mode = 0666
pm = static
pm.max_children = 2
catch_workers_output = yes
clear_env = yes
env[SNOWFLAKE_SHM_DIR] = $FPM_DIR/shm
EOF
  # Not through no_rust: a function sent to the background is a subshell, and $! would be
  # that subshell's, not php-fpm's, which then outlived the test.
  env PATH="$NORUST_PATH" "$fpm" -c "$FPM_DIR/php.ini" -y "$FPM_DIR/fpm.conf" -F -O >"$FPM_DIR/fpm.out" 2>&1 &
  FPM_PID=$!
  for _ in $(seq 100); do
    [ -S "$FPM_DIR/fpm.sock" ] && break
    kill -0 "$FPM_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -S "$FPM_DIR/fpm.sock" ] || { cat "$FPM_DIR/fpm.out" "$FPM_DIR/fpm.log" 2>/dev/null; return 1; }
  cp tests/dist/check.php "$FPM_DIR/check.php" && chmod 644 "$FPM_DIR/check.php"
  local i
  for i in 1 2 3; do
    SCRIPT_FILENAME=$FPM_DIR/check.php REQUEST_METHOD=GET SERVER_PROTOCOL=HTTP/1.1 \
      QUERY_STRING="vectors=$VECTORS&version=$VERSION" cgi-fcgi -bind -connect "$FPM_DIR/fpm.sock" >"$FPM_DIR/response" || return 1
    cat "$FPM_DIR/response"
    grep -Eq "^ok fpm-fcgi preload $VERSION [0-9]+ vectors, 10000 IDs" "$FPM_DIR/response" || return 1
  done
}
check "PHP-FPM preloading the package (the php.ini of vendor/bin/snowflake-preload-header --ini): the bundled library decodes the shared vectors and issues IDs" \
  fpm_serves

# --- C and C++: the tarball ----------------------------------------------------------------
section "C and C++: $(basename "$TARBALL")"
# Unpacked somewhere else than where it was made: it must find itself from there.
C_PREFIX=$WORK/somewhere/else/$TARBALL_NAME
tarball_layout() {
  mkdir -p "$WORK/somewhere/else" && tar -C "$WORK/somewhere/else" -xzf "$TARBALL" || return 1
  local lib=$C_PREFIX/lib
  test -f "$lib/libsnowflake.so.$VERSION" && test -L "$lib/libsnowflake.so.$SOVERSION" && test -L "$lib/libsnowflake.so" &&
    test "$(readlink "$lib/libsnowflake.so.$SOVERSION")" = "libsnowflake.so.$VERSION" &&
    test "$(readlink "$lib/libsnowflake.so")" = "libsnowflake.so.$SOVERSION" &&
    readelf -d "$lib/libsnowflake.so.$VERSION" | grep -q "SONAME.*\[libsnowflake.so.$SOVERSION\]" &&
    test -f "$lib/libsnowflake.a" && test -f "$lib/pkgconfig/snowflake.pc" &&
    test -f "$lib/cmake/snowflake/snowflake-config.cmake" && test -f "$lib/cmake/snowflake/snowflake-config-version.cmake" &&
    test -f "$C_PREFIX/include/snowflake.h" && test -f "$C_PREFIX/include/snowflake.hpp" &&
    test -f "$C_PREFIX/include/snowflake_php.h" && test -x "$C_PREFIX/bin/snowflake" &&
    test -f "$C_PREFIX/share/doc/libsnowflake/API.md" && test -f "$lib/libsnowflake_minimal.a" &&
    test -f "$lib/pkgconfig/snowflake-minimal.pc" &&
    PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --exact-version="$VERSION" snowflake &&
    test "$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --variable=libdir snowflake)" -ef "$lib"
}
check "unpacked elsewhere: lib/ (libsnowflake.so.$VERSION, soname .so.$SOVERSION, links, .a, _minimal.a), include/, bin/snowflake, share/doc/libsnowflake/API.md; snowflake.pc finds its prefix" \
  tarball_layout
export PKG_CONFIG_PATH=$C_PREFIX/lib/pkgconfig
check "tests/c/test_api.c builds against the tarball through pkg-config" \
  gcc -std=c99 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags snowflake libcjson) tests/c/test_api.c \
  -o "$WORK/test_api" $(pkg-config --libs snowflake libcjson) -pthread -Wl,-rpath,"$C_PREFIX/lib"
program "test_api against the tarball's libsnowflake.so: vectors, errors, threads, fork" \
  no_rust "$WORK/test_api" "$VECTORS" 20000
check "tests/c/example.c links the tarball's libsnowflake.a (pkg-config static_libs) and runs" bash -c "
  gcc -std=c99 -Wall -Wextra -Werror -pedantic \$(pkg-config --cflags snowflake) tests/c/example.c -o '$WORK/example_static' \
    \$(pkg-config --variable=static_libs snowflake) && ! ldd '$WORK/example_static' | grep -q libsnowflake &&
  PATH='$NORUST_PATH' '$WORK/example_static' | grep -q 'ERR_SNOWFLAKE_VALUE: worker = 99'"
check "C++: tests/cpp builds against the tarball through its CMake package" bash -c "
  cmake -S tests/cpp -B '$WORK/cpp' -DCMAKE_PREFIX_PATH='$C_PREFIX' -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build '$WORK/cpp' -j 2"
program "test_cpp against the tarball: vectors, exceptions, RAII, threads" no_rust "$WORK/cpp/test_cpp" "$VECTORS"
check "C++: example_cpp_static (libsnowflake.a through CMake) runs" says "ERR_SNOWFLAKE_VALUE: worker = 99" \
  no_rust "$WORK/cpp/example_cpp_static"
check "bin/snowflake --help runs with no Rust on the PATH" says "^Usage: snowflake <COMMAND>" no_rust "$C_PREFIX/bin/snowflake" --help
check "bin/snowflake --version is $VERSION" says "^snowflake $VERSION$" no_rust "$C_PREFIX/bin/snowflake" --version
check "bin/snowflake decode: Discord's published ID 175928847299117063" \
  says "^175928847299117063  2016-04-30T11:18:25.796Z  worker=1 process=0 sequence=7$" \
  no_rust "$C_PREFIX/bin/snowflake" decode --layout discord 175928847299117063
# Issue 14 through the shipped CLI: the shared vectors' public IDs both ways (key from a file,
# as the CLI requires) and core's PostgreSQL SQL for twitter.
cli_public_and_sql() {
  python3 - "$VECTORS" "$WORK" <<'PY' || return 1
import json, sys
from pathlib import Path
vectors, work = Path(sys.argv[1]), Path(sys.argv[2])
row = json.loads((vectors / "public_ids.json").read_text())["keys"][0]
assert row["encoding"] == "base62"
(work / "public.key").write_text(row["key_hex"] + "\n")
(work / "public.ids").write_text("".join(c["id"] + "\n" for c in row["cases"]))
(work / "public.texts").write_text("".join(c["text"] + "\n" for c in row["cases"]))
script = next(s for s in json.loads((vectors / "sql_scripts.json").read_text())["scripts"] if s["spec"] == "twitter")
(work / "twitter.sql").write_text(script["sql"])
PY
  no_rust "$C_PREFIX/bin/snowflake" public encode --key-file "$WORK/public.key" <"$WORK/public.ids" | diff - "$WORK/public.texts" &&
    no_rust "$C_PREFIX/bin/snowflake" public decode --key-file "$WORK/public.key" <"$WORK/public.texts" | diff - "$WORK/public.ids" &&
    no_rust "$C_PREFIX/bin/snowflake" sql --layout twitter | cmp - "$WORK/twitter.sql"
}
check "bin/snowflake public encode|decode --key-file: the shared public-ID vectors; bin/snowflake sql: core's SQL" \
  cli_public_and_sql
cli_next() {
  no_rust "$C_PREFIX/bin/snowflake" next -n 1000 >"$WORK/cli-ids" &&
    test "$(sort -n -u "$WORK/cli-ids" | wc -l)" = 1000 && sort -n -c "$WORK/cli-ids"
}
check "bin/snowflake next -n 1000: 1000 increasing IDs" cli_next
# Issue 41's "done when": snowflake serve from the packaged CLIs, with no Rust on the PATH.
# tests/serve (pytest) whole against the tarball's bin/snowflake here, and its short part (IDs,
# decode, layout, readyz, metrics, TLS, SIGTERM) against the .deb's /usr/bin/snowflake in debs
# below. Beside the service: .venv's Python binding (dist/python's wheel, installed by the build
# step) and, for PHP-FPM, the tarball's library. TMPDIR open to all: FPM's workers (nobody when
# we are root) reach the host's record the test makes there.
SERVE_TMP=$WORK/serve-tmp
serve_tests() { # <the CLI> [pytest's arguments...]
  local cli=$1
  shift
  mkdir -p -m 755 "$SERVE_TMP" && rust_is_gone &&
    no_rust env SNOWFLAKE_BIN="$cli" SNOWFLAKE_LIB="$C_PREFIX/lib/libsnowflake.so" TMPDIR="$SERVE_TMP" \
      "$ROOT/.venv/bin/python" -m pytest "$ROOT/tests/serve" -q -p no:cacheprovider "$@"
}
serve_summary() { grep -E '[0-9]+ (passed|failed)' "$WORK/log" | tail -n 1 | sed 's/^=* */     /; s/ =*$//'; }
check "snowflake serve from the tarball's bin/snowflake: tests/serve whole (real clients in six languages, bad input, 408s and 503s, tokens, TLS, SIGTERM, kill -9, leases, PHP-FPM)" \
  serve_tests "$C_PREFIX/bin/snowflake"
serve_summary
minimal_c

debs

# --- sizes -----------------------------------------------------------------------------------
section "sizes"
for f in "$WHEEL" "$SDIST" "$NPM_MAIN" "$NPM_PLATFORM" "$COMPOSER_ZIP" "$TARBALL" "${DEBS[@]}"; do
  awk -v size="$(stat -c %s "$f")" -v name="${f#"$ROOT"/}" 'BEGIN { printf "     %8.1f KiB  %s\n", size / 1024, name }'
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
