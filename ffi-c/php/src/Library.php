<?php

declare(strict_types=1);

namespace Snowflake;

use FFI;

/**
 * Finds and loads libsnowflake through FFI, once per process (or once per PHP-FPM master,
 * when preloaded).
 *
 * Where the declarations come from, in this order:
 *
 * 1. the FFI scope `snowflake`, when `preload.php` ran as `opcache.preload` (or the header was
 *    given to `ffi.preload`): the only way under `ffi.enable=preload` outside the CLI;
 * 2. `FFI::cdef()` of `snowflake_php.h` with the library found by {@see Library::libraryPath()}.
 *
 * The header is the generated, preprocessor-free `include/snowflake_php.h`: the PHP side never
 * repeats a C declaration, so it cannot drift from the library.
 */
final class Library
{
    /** The FFI scope name that `snowflake_php.h` declares (`#define FFI_SCOPE "snowflake"`). */
    public const SCOPE = 'snowflake';

    private static ?FFI $ffi = null;
    private static string $mode = '';
    private static string $path = '';

    private function __construct()
    {
    }

    /** The loaded library (loading it on first use). */
    public static function ffi(): FFI
    {
        return self::$ffi ?? self::load();
    }

    /**
     * How the library was loaded: `preload` (the `snowflake` FFI scope) or `cdef`; '' before
     * the first use.
     */
    public static function mode(): string
    {
        return self::$mode;
    }

    /** The library file loaded by `cdef` mode ('' in preload mode: see php.ini). */
    public static function loadedPath(): string
    {
        return self::$path;
    }

    /** The library's version, e.g. `0.1.0`. */
    public static function version(): string
    {
        return self::string(self::ffi()->snowflake_version());
    }

    /**
     * A `const char *` result as a PHP string: FFI already converts function results of that
     * type (NULL gives null), but not struct fields, which stay CData.
     *
     * @internal
     */
    public static function string(mixed $ptr): string
    {
        return match (true) {
            is_string($ptr) => $ptr,
            $ptr instanceof FFI\CData && !FFI::isNull($ptr) => FFI::string($ptr),
            default => '',
        };
    }

    private static function load(): FFI
    {
        try {
            // Throws when nothing was preloaded under that name; costs one hash lookup.
            $ffi = FFI::scope(self::SCOPE);
            self::$mode = 'preload';
            return self::$ffi = $ffi;
        } catch (FFI\Exception) {
        }
        if (PHP_SAPI !== 'cli' && PHP_SAPI !== 'phpdbg' && ini_get('ffi.enable') === 'preload') {
            // The package's own files, by the paths they have in this install (under vendor/):
            // a Composer user has no docs/ of the repository.
            throw new SnowflakeException(
                'ffi.enable=preload allows FFI outside the CLI only through preloading: `php '
                . self::packageFile('bin/snowflake-preload-header') . ' --ini` prints the php.ini lines for '
                . 'this install (ffi.preload=<the header it writes>, opcache.preload=' . self::packageFile('preload.php')
                . ', opcache.preload_user, ...); see the PHP-FPM section of ' . self::packageFile('README.md'),
                0,
            );
        }
        $lib = self::libraryPath();
        // No library of its own, none set, none installed: what to do is SNOWFLAKE_LIB (the
        // header comes beside the library), whichever of the two is missing first.
        $notFound = 'set SNOWFLAKE_LIB to the libsnowflake.so you built (`make -C libsnowflake/ffi-c build` '
            . 'makes libsnowflake/target/release/libsnowflake.so), or install the release\'s Composer package, '
            . 'which carries the library (' . self::packageFile('README.md') . ')';
        try {
            $header = self::headerPath($lib);
        } catch (SnowflakeException $e) {
            if (str_contains($lib, '/')) {
                throw $e;
            }
            throw new SnowflakeException("libsnowflake not found: no SNOWFLAKE_LIB, no library in this package, none installed; $notFound", 0);
        }
        try {
            $ffi = FFI::cdef(self::declarations($header), $lib);
        } catch (FFI\Exception $e) {
            $hint = match (true) {
                $lib === self::bundledLibraryPath() => 'the library bundled with this package for ' . dirname(substr($lib, strlen(dirname(__DIR__) . '/lib/')))
                    . ' did not load on this system (the Linux ones need glibc 2.17 or later, or musl); '
                    . 'build libsnowflake from source and set SNOWFLAKE_LIB (' . self::packageFile('README.md') . ')',
                !str_contains($lib, '/') => "no SNOWFLAKE_LIB, no library in this package, none installed: $notFound",
                default => 'set SNOWFLAKE_LIB to a libsnowflake.so built for this system (' . self::packageFile('README.md') . ')',
            };
            throw new SnowflakeException(
                "cannot load $lib with the declarations of $header: " . $e->getMessage() . " ($hint)",
                0,
            );
        }
        self::$mode = 'cdef';
        self::$path = $lib;
        return self::$ffi = $ffi;
    }

    /** A file of this package by its path in this install (vendor/libsnowflake/snowflake/... under Composer). */
    private static function packageFile(string $name): string
    {
        return dirname(__DIR__) . '/' . $name;
    }

    /**
     * The library to load: `$SNOWFLAKE_LIB` when set; else the prebuilt library this package
     * carries for the platform (see {@see Library::bundledLibraryPath()}); else the first
     * `libsnowflake.so` of the usual install prefixes; else the bare name for the dynamic loader
     * to find (`LD_LIBRARY_PATH`, the `ldconfig` cache).
     */
    public static function libraryPath(): string
    {
        $env = getenv('SNOWFLAKE_LIB');
        if (is_string($env) && $env !== '') {
            if (!is_file($env)) {
                throw new SnowflakeException("SNOWFLAKE_LIB=$env: no such file", 0);
            }
            return $env;
        }
        $bundled = self::bundledLibraryPath();
        if ($bundled !== null) {
            return $bundled;
        }
        $dirs = ['/usr/local/lib', '/usr/local/lib64', '/usr/lib', '/usr/lib64'];
        $multiarch = PHP_OS_FAMILY === 'Linux' ? php_uname('m') . '-linux-gnu' : '';
        if ($multiarch !== '') {
            array_splice($dirs, 2, 0, ["/usr/local/lib/$multiarch", "/usr/lib/$multiarch"]);
        }
        $name = PHP_OS_FAMILY === 'Darwin' ? 'libsnowflake.dylib' : 'libsnowflake.so';
        foreach ($dirs as $dir) {
            if (is_file("$dir/$name")) {
                return "$dir/$name";
            }
        }
        return $name;
    }

    /**
     * The prebuilt library in this package for this system, with the header in `include/`:
     * the Composer package that scripts/dist.sh makes carries one for each platform of
     * {@see Library::bundledLibraryFor()}, of the same version as these classes, so it comes
     * before any other install. Null when there is none for this system (a checkout, or
     * another OS or machine).
     */
    public static function bundledLibraryPath(): ?string
    {
        $relative = self::bundledLibraryFor(PHP_OS_FAMILY, php_uname('m'), self::libc());
        if ($relative === null) {
            return null;
        }
        $file = dirname(__DIR__) . '/lib/' . $relative;
        return is_file($file) ? $file : null;
    }

    /**
     * Where, under this package's `lib/`, the prebuilt library for an OS family
     * (`PHP_OS_FAMILY`), a machine (`php_uname('m')`) and, on Linux, a C library (`gnu` or
     * `musl`) is: `x86_64-linux-gnu/libsnowflake.so`, `aarch64-linux-gnu/libsnowflake.so`,
     * `x86_64-linux-musl/libsnowflake.so`, `x86_64-windows/snowflake.dll`,
     * `x86_64-darwin/libsnowflake.dylib`, `aarch64-darwin/libsnowflake.dylib`. Null for a
     * system this package's libraries are not built for. Machine names are taken in each OS's
     * spelling (`AMD64` on Windows, `arm64` on macOS).
     */
    public static function bundledLibraryFor(string $osFamily, string $machine, string $libc): ?string
    {
        $arch = match (strtolower($machine)) {
            'x86_64', 'amd64', 'x64' => 'x86_64',
            'aarch64', 'arm64' => 'aarch64',
            default => null,
        };
        if ($arch === null) {
            return null;
        }
        return match ($osFamily) {
            'Linux' => match ($libc) {
                'gnu', 'musl' => "$arch-linux-$libc/libsnowflake.so",
                default => null,
            },
            'Darwin' => "$arch-darwin/libsnowflake.dylib",
            'Windows' => $arch === 'x86_64' ? 'x86_64-windows/snowflake.dll' : null,
            default => null,
        };
    }

    /**
     * The C library this PHP runs on, on Linux: `musl` (Alpine) or `gnu`. The process's own
     * mappings say which one it loaded; where /proc is closed (open_basedir), what
     * `/usr/bin/ldd` names, as napi-rs's loaders tell them; glibc when neither says.
     */
    public static function libc(): string
    {
        if (PHP_OS_FAMILY !== 'Linux') {
            return '';
        }
        $maps = @file_get_contents('/proc/self/maps');
        if (is_string($maps) && $maps !== '') {
            return preg_match('~/ld-musl-[^/\s]*$~m', $maps) === 1 ? 'musl' : 'gnu';
        }
        $ldd = @file_get_contents('/usr/bin/ldd');
        return is_string($ldd) && str_contains($ldd, 'musl') ? 'musl' : 'gnu';
    }

    /**
     * `snowflake_php.h`: `$SNOWFLAKE_HEADER` when set, else beside the library
     * (`<prefix>/include/` for `<prefix>/lib/libsnowflake.so`), else this source tree's
     * `include/`, else the usual include directories.
     */
    public static function headerPath(string $libraryPath): string
    {
        $env = getenv('SNOWFLAKE_HEADER');
        if (is_string($env) && $env !== '') {
            return $env;
        }
        $candidates = [];
        if (str_contains($libraryPath, '/')) {
            $dir = dirname($libraryPath);
            $candidates[] = dirname($dir) . '/include/snowflake_php.h';
            $candidates[] = dirname($dir, 2) . '/include/snowflake_php.h'; // <prefix>/lib/<multiarch>/
            $candidates[] = $dir . '/snowflake_php.h';
        }
        $candidates[] = dirname(__DIR__, 3) . '/include/snowflake_php.h'; // ffi-c/php/src -> repo root
        $candidates[] = '/usr/local/include/snowflake_php.h';
        $candidates[] = '/usr/include/snowflake_php.h';
        foreach ($candidates as $file) {
            if (is_file($file)) {
                return $file;
            }
        }
        throw new SnowflakeException(
            'snowflake_php.h not found (looked in ' . implode(', ', $candidates) . '); set SNOWFLAKE_HEADER',
            0,
        );
    }

    /** The header's C declarations for `FFI::cdef()`, which takes no preprocessor lines. */
    public static function declarations(string $headerPath): string
    {
        $code = @file_get_contents($headerPath);
        if ($code === false) {
            throw new SnowflakeException("cannot read $headerPath", 0);
        }
        return (string) preg_replace('/^\s*#.*$/m', '', $code);
    }

    /**
     * `snowflake_php.h` with `FFI_SCOPE "snowflake"` and `FFI_LIB` set to the absolute path of
     * `$libraryPath` (default: the library this class would load): the file for php.ini's
     * `ffi.preload`, whose `FFI_LIB` the dynamic loader must find as written.
     */
    public static function preloadHeader(?string $libraryPath = null): string
    {
        $lib = $libraryPath ?? self::libraryPath();
        $real = str_contains($lib, '/') ? realpath($lib) : false;
        if ($real === false) {
            throw new SnowflakeException("libsnowflake not found at `$lib`; set SNOWFLAKE_LIB", 0);
        }
        return '#define FFI_SCOPE "' . self::SCOPE . "\"\n"
            . '#define FFI_LIB "' . addcslashes($real, "\"\\") . "\"\n"
            . self::declarations(self::headerPath($real));
    }

    /**
     * Loads the library into the `snowflake` FFI scope, from `opcache.preload` (this is what
     * `preload.php` does). `FFI::load()` takes the library from the header's `FFI_LIB` line, so
     * it loads a copy of the header made by {@see Library::preloadHeader()}.
     *
     * PHP forbids `FFI::load()` when preloading runs as `opcache.preload_user` (a master
     * started as root): use `ffi.preload` with that header instead (README.md, "PHP-FPM").
     */
    public static function preload(?string $libraryPath = null): void
    {
        $code = self::preloadHeader($libraryPath);
        // tempnam() creates the file 0600 under a fresh name: no race with other users of /tmp.
        $tmp = tempnam(sys_get_temp_dir(), 'snowflake-ffi-');
        if ($tmp === false || file_put_contents($tmp, $code) === false) {
            throw new SnowflakeException('cannot write a temporary header for FFI::load()', 0);
        }
        try {
            FFI::load($tmp);
        } catch (FFI\Exception $e) {
            throw new SnowflakeException(
                'preloading libsnowflake failed: ' . $e->getMessage()
                . ' (php.ini: ffi.preload=<the header that `php ' . self::packageFile('bin/snowflake-preload-header')
                . ' --ini` says to write>)',
                0,
                '',
                $e,
            );
        } finally {
            unlink($tmp);
        }
    }
}
