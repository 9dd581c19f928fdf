// Finds and loads the native addon, in the napi-rs convention:
//
// 1. ./libsnowflake.<platform>.node beside this file: a from-source build in a checkout
//    (`npm run build`, which needs Rust), so that contributors test what they just built;
// 2. the prebuilt platform package @libsnowflake/<platform>, which npm installs as an
//    optionalDependency of `libsnowflake` on the platforms it is published for (npm skips the
//    others by their package.json's os, cpu and libc fields).
//
// A platform without either gets an Error with code ERR_SNOWFLAKE_NO_ADDON that names the
// platform and how to build the addon from source.
'use strict';

const { existsSync, readFileSync } = require('node:fs');
const path = require('node:path');

// The platforms with a prebuilt package (scripts/dist.sh builds one addon for each), and the
// oldest glibc a Linux glibc addon loads on (scripts/dist.env's GLIBC_FLOOR: the addon is
// linked against that glibc). Windows' addon is built with mingw-w64 (`win32-x64-gnu`): Node
// loads it like an MSVC-built one, since Node-API is a C interface.
const PREBUILT = {
  'linux-x64-gnu': { glibc: '2.17' },
  'linux-arm64-gnu': { glibc: '2.17' },
  'linux-x64-musl': {},
  'win32-x64-gnu': {},
  'darwin-x64': {},
  'darwin-arm64': {},
};

// musl or glibc, as napi-rs's loaders tell them: /usr/bin/ldd names its C library (cheap),
// else Node's diagnostic report carries glibc's version (a few ms).
function isMusl() {
  try {
    const ldd = readFileSync('/usr/bin/ldd', 'latin1');
    if (ldd.includes('musl')) return true;
    if (ldd.includes('GNU C Library') || ldd.includes('glibc')) return false;
  } catch {
    // no ldd: ask the report
  }
  const report = process.report && typeof process.report.getReport === 'function' ? process.report.getReport() : null;
  return !(report && report.header && report.header.glibcVersionRuntime);
}

/** The napi-rs name of this platform: linux-x64-gnu, linux-arm64-musl, darwin-arm64, win32-x64-msvc... */
function platformName() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/**
 * The prebuilt package for the platform `name`, if one is published: on Windows, an addon
 * built with MSVC (`win32-x64-msvc`, what `npm run build` names it there) or with mingw-w64
 * (`-gnu`) serves alike.
 */
function prebuiltName(name) {
  const candidates = name.startsWith('win32-') ? [name, name.replace(/-msvc$/, '-gnu')] : [name];
  return candidates.find((c) => Object.prototype.hasOwnProperty.call(PREBUILT, c));
}

/** The file a from-source build writes, beside this file. */
function localAddonPath(name = platformName()) {
  return path.join(__dirname, `libsnowflake.${name}.node`);
}

function noAddon(message, cause) {
  const err = new Error(`libsnowflake: ${message}`);
  err.code = 'ERR_SNOWFLAKE_NO_ADDON';
  if (cause) err.cause = cause;
  return err;
}

const FROM_SOURCE =
  'build it from source instead (needs Rust 1.77+ from https://rustup.rs): in a checkout of libsnowflake, ' +
  '`cd bindings-node && npm run build`, then `npm install /path/to/libsnowflake/bindings-node` in your project';

function load() {
  const name = platformName();
  const local = localAddonPath(name);
  if (existsSync(local)) return require(local);

  const published = prebuiltName(name);
  const prebuilt = published && PREBUILT[published];
  const pkg = `@libsnowflake/${published}`;
  if (!prebuilt) {
    throw noAddon(
      `no prebuilt addon for this platform (${name}); prebuilt packages exist for ` +
        `${Object.keys(PREBUILT).join(', ')}. To use libsnowflake on ${name}, ${FROM_SOURCE}.`,
    );
  }
  try {
    return require(pkg);
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(pkg)) {
      throw noAddon(
        `the prebuilt addon package ${pkg} is not installed. npm installs it with libsnowflake, as an ` +
          'optional dependency, unless optional dependencies were left out (--omit=optional, --no-optional) ' +
          'or the lockfile was made on another platform: run `npm install libsnowflake` again on this machine, ' +
          `or ${FROM_SOURCE}.`,
        e,
      );
    }
    if (e && /GLIBC_[0-9.]+' not found/.test(String(e.message))) {
      throw noAddon(`the prebuilt addon ${pkg} needs glibc ${prebuilt.glibc} or later, which this system lacks; ${FROM_SOURCE}.`, e);
    }
    throw e;
  }
}

module.exports = { load, platformName, prebuiltName, localAddonPath, PREBUILT };
