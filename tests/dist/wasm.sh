#!/usr/bin/env bash
# @libsnowflake/wasm from its packed tarball (issue 43), as a user installs it: a fresh npm
# project with that package alone (no addon, no native loader), then the shared vectors
# (tests/dist/wasm/vectors.mjs: layouts, decode, bounds, compose, encodings, the UUIDv7 view,
# generator traces, public IDs, and bad input's error codes and classes) under Node, Bun, Deno
# and headless Chromium (a page with everything inlined: no server, no network); and the
# same answers and error codes as the native addon for the same calls.
#
# A section of tests/dist/run.sh, which sources it; alone, `tests/dist/wasm.sh` tests
# dist/node/'s tarballs (scripts/dist.sh) and ends with `N passed, M failed`.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  cd "$(dirname "$0")/../.."
  ROOT=$PWD
  DIST=${DIST:-$ROOT/dist}
  VECTORS=$ROOT/tests/vectors
  # shellcheck source=scripts/dist.env
  . scripts/dist.env
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-wasm-test.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  # shellcheck source=tests/dist/lib.sh
  . tests/dist/lib.sh
  WASM_ALONE=1
fi

NPM_WASM=$DIST/node/libsnowflake-wasm-$VERSION.tgz
WASM_PROJECT=$WORK/wasm-project
section "WebAssembly: $(basename "$NPM_WASM")"
WASM_T0=$(now_ms)
wasm_package() {
  node - "$NPM_WASM" "$VERSION" <<'JS'
const { execFileSync } = require('node:child_process');
const assert = require('node:assert/strict');
const [tgz, version] = process.argv.slice(2);
const list = execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).trim().split('\n').sort();
assert.deepEqual(list, ['package/README.md', 'package/index.d.ts', 'package/index.js', 'package/package.json',
  'package/snowflake.d.ts', 'package/snowflake.js', 'package/snowflake.wasm']);
const m = JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }));
assert.equal(m.name, '@libsnowflake/wasm');
assert.equal(m.version, version);
assert.deepEqual([m.dependencies, m.optionalDependencies, m.scripts], [undefined, undefined, undefined]);
for (const f of ['index.js', 'snowflake.js']) {
  const js = execFileSync('tar', ['-xzOf', tgz, `package/${f}`], { encoding: 'utf8' });
  // A browser bundle must not meet the native loader, nor a static import of a Node module.
  assert.ok(!/native\.js|\.node['"]|require\(|^import .* from ['"]node:/m.test(js), `${f} reaches for Node`);
}
const wasm = execFileSync('tar', ['-xzOf', tgz, 'package/snowflake.wasm']);
const imports = WebAssembly.Module.imports(new WebAssembly.Module(wasm));
assert.deepEqual(imports, [{ module: 'snowflake', name: 'sf_clock_now', kind: 'function' }]);
console.log(`snowflake.wasm: ${wasm.length} bytes, ${require('node:zlib').gzipSync(wasm, { level: 9 }).length} gzipped`);
JS
}
check "the package holds the JS layer, its types and the module, no native loader, no dependency; the module imports only the clock" \
  wasm_package
grep 'snowflake.wasm:' "$WORK/log" | sed 's/^/     /'
wasm_installs() {
  mkdir -p "$WASM_PROJECT" &&
    echo '{ "name": "browser-app", "version": "1.0.0", "private": true, "type": "module" }' >"$WASM_PROJECT/package.json" &&
    cp tests/dist/wasm/vectors.mjs tests/dist/wasm/check.mjs tests/dist/wasm/page.mjs "$WASM_PROJECT/" &&
    (cd "$WASM_PROJECT" && no_rust npm install --ignore-scripts --offline --no-audit --no-fund --loglevel=error "$NPM_WASM") &&
    test ! -e "$WASM_PROJECT/node_modules/libsnowflake"
}
check "a new npm project installs @libsnowflake/wasm alone (npm install --offline, no Rust)" wasm_installs
in_wasm_project() { (cd "$WASM_PROJECT" && env PATH="$NORUST_PATH" NO_COLOR=1 "$@"); }
BUN=$ROOT/.tools/js/bun
DENO=$ROOT/.tools/js/deno
export DENO_DIR=${DENO_DIR:-$WORK/deno-dir} DENO_NO_UPDATE_CHECK=1
check "Node: import '@libsnowflake/wasm' passes the shared vectors (no addon)" \
  says "^ok wasm node $VERSION [0-9]+ vectors, [0-9]+ IDs$" in_wasm_project node check.mjs "$VECTORS" "$VERSION"
check "Bun: the same" \
  says "^ok wasm bun $VERSION [0-9]+ vectors, [0-9]+ IDs$" in_wasm_project "$BUN" check.mjs "$VECTORS" "$VERSION"
check "Deno: the same (deno run --allow-read: no FFI)" \
  says "^ok wasm deno $VERSION [0-9]+ vectors, [0-9]+ IDs$" in_wasm_project "$DENO" run --allow-read check.mjs "$VECTORS" "$VERSION"
# The same answers and errors as the native addon, call for call (parity.mjs): the addon of
# run.sh's Node project, or (alone) dist/node's installed into a project of its own.
native_index() {
  if [ -z "${NODE_PROJECT:-}" ]; then
    NODE_PROJECT=$WORK/native-project
    mkdir -p "$NODE_PROJECT" && echo '{ "name": "native", "version": "1.0.0", "private": true }' >"$NODE_PROJECT/package.json" &&
      (cd "$NODE_PROJECT" && no_rust npm install --ignore-scripts --offline --no-audit --no-fund --loglevel=error \
        "$DIST/node/libsnowflake-$VERSION.tgz" "$DIST/node/libsnowflake-linux-x64-gnu-$VERSION.tgz") >/dev/null || return 1
  fi
  echo "$NODE_PROJECT/node_modules/libsnowflake/index.mjs"
}
wasm_parity() {
  local index
  index=$(native_index) && cp tests/dist/wasm/parity.mjs "$WASM_PROJECT/" &&
    says "^ok parity [0-9]+ calls" in_wasm_project node parity.mjs "$index"
}
check "the same calls through the native addon and the WebAssembly give the same answers and errors (code, class, the addon's detail fields)" wasm_parity
# The types as a TypeScript user meets them (tsc of bindings-node's devDependencies).
types_compile() {
  cp tests/dist/wasm/types.ts "$WASM_PROJECT/" &&
    in_wasm_project "$ROOT/bindings-node/node_modules/.bin/tsc" --noEmit --strict --target es2022 --module nodenext \
      --moduleResolution nodenext --lib es2022,dom types.ts
}
check "TypeScript: index.d.ts and snowflake.d.ts type a user's program, and refuse coordinated options" types_compile
# Headless Chromium on a page with everything inlined (page.mjs), driven over a pipe
# (chromium.mjs), which waits for the page's promise: no server, no port, no fixed wait.
chromium_runs() {
  in_wasm_project node page.mjs node_modules/@libsnowflake/wasm "$VECTORS" "$WORK/page.html" &&
    in_wasm_project timeout 300 node "$ROOT/tests/dist/wasm/chromium.mjs" "$WORK/page.html" "$WORK/chromium-profile" >"$WORK/chromium.out"
  local status=$?
  cat "$WORK/chromium.out"
  [ "$status" -eq 0 ] && grep -Eq "^ok wasm chromium $VERSION [0-9]+ vectors, [0-9]+ IDs, a worker Chrome/[0-9.]+$" "$WORK/chromium.out"
}
check "headless Chromium ($(chromium --version 2>/dev/null | head -1)): the same in a page, and a decode in a web worker" chromium_runs
echo "     WebAssembly checks: $(($(now_ms) - WASM_T0)) ms"

if [ -n "${WASM_ALONE:-}" ]; then
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
fi
