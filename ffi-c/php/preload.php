<?php

/*
 * opcache.preload script: compiles the Snowflake\ classes once, in the PHP-FPM master (or a
 * CLI run with opcache.enable_cli=1), and loads libsnowflake into the FFI scope `snowflake`
 * unless php.ini's ffi.preload already did. With ffi.enable=preload (PHP's default) this is
 * the only way FFI works outside the CLI: the FFI API may then be used only by preloaded
 * code, which these classes are. php.ini lines: `php bin/snowflake-preload-header --ini`.
 *
 * The library is the one Snowflake\Library::libraryPath() finds in the master's environment
 * ($SNOWFLAKE_LIB, else the library bundled with the Composer package, else the usual install
 * prefixes).
 */

declare(strict_types=1);

require __DIR__ . '/autoload.php';

// Preloading keeps what is compiled here. class_exists() goes through the autoloader, which
// loads parents before children, so every class links.
foreach (glob(__DIR__ . '/src/*.php') ?: [] as $file) {
    $name = 'Snowflake\\' . basename($file, '.php');
    class_exists($name) || interface_exists($name) || enum_exists($name);
}

try {
    FFI::scope(Snowflake\Library::SCOPE); // loaded by ffi.preload
} catch (FFI\Exception) {
    Snowflake\Library::preload();
}
