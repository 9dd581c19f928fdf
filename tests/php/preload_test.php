<?php

// Preloading: ffi.enable=preload with opcache.preload (CLI), with ffi.preload + opcache.preload
// (CLI), and under PHP-FPM with the php.ini lines of docs/php.md, where FFI works only so.

declare(strict_types=1);

const PACKAGE = __DIR__ . '/../../ffi-c/php';
const PRELOAD_OK = "mode=preload preloaded=yes increasing=yes worker=5\n";

/** A fresh temporary directory, readable by the FPM workers' user. */
function temp_dir(string $prefix): string
{
    $dir = sys_get_temp_dir() . "/$prefix-" . getmypid() . '-' . bin2hex(random_bytes(4));
    mkdir($dir, 0755);
    return $dir;
}

function remove_dir(string $dir): void
{
    foreach (glob("$dir/*") ?: [] as $f) {
        unlink($f);
    }
    rmdir($dir);
}

test('preload (CLI): opcache.preload=preload.php with ffi.enable=preload', function () {
    // As root, PHP preloads only as opcache.preload_user, in a child where FFI::load() is
    // forbidden (that is the next test); a plain user preloads with FFI::load(). As nobody,
    // its host states go to a directory of their own: a state belongs to one user.
    $shm = temp_dir('sf-shm-nobody');
    chmod($shm, 01777);
    try {
        [$status, $out] = run_php(__DIR__ . '/fixtures/preload_check.php', [
            'ffi.enable' => 'preload',
            'opcache.enable' => '1',
            'opcache.enable_cli' => '1',
            'opcache.preload' => realpath(PACKAGE) . '/preload.php',
        ], ['SNOWFLAKE_SHM_DIR' => $shm], [], true);
        assert_same([0, PRELOAD_OK], [$status, $out], 'output');
    } finally {
        remove_dir($shm);
    }
});

test('preload (CLI): ffi.preload of the generated header, then opcache.preload', function () {
    $dir = temp_dir('sf-ffi-preload');
    try {
        [$status, $header] = run_php(realpath(PACKAGE) . '/bin/snowflake-preload-header');
        assert_same(0, $status, "snowflake-preload-header: $header");
        assert_true(str_contains($header, '#define FFI_LIB "' . realpath((string) getenv('SNOWFLAKE_LIB')) . '"'), 'absolute FFI_LIB');
        file_put_contents("$dir/snowflake.h", $header);
        [$status, $out] = run_php(__DIR__ . '/fixtures/preload_check.php', [
            'ffi.enable' => 'preload',
            'ffi.preload' => "$dir/snowflake.h",
            'opcache.enable' => '1',
            'opcache.enable_cli' => '1',
            'opcache.preload' => realpath(PACKAGE) . '/preload.php',
            'opcache.preload_user' => 'nobody', // as under FPM: FFI::load() is forbidden, ffi.preload does it
        ], ['SNOWFLAKE_LIB' => '/nonexistent/the-scope-must-come-from-ffi.preload.so']);
        assert_same([0, PRELOAD_OK], [$status, $out], 'output');
    } finally {
        remove_dir($dir);
    }
});

test('library not found: a clear SnowflakeException', function () {
    $dir = temp_dir('sf-missing');
    try {
        file_put_contents("$dir/t.php", '<?php require ' . var_export(realpath(PACKAGE) . '/autoload.php', true) . ';'
            . ' try { new Snowflake\Layout("twitter"); } catch (Snowflake\SnowflakeException $e) { echo get_class($e), ": ", $e->getMessage(); }');
        [$status, $out] = run_php("$dir/t.php", [], ['SNOWFLAKE_LIB' => "$dir/libsnowflake.so"]);
        assert_same("Snowflake\\SnowflakeException: SNOWFLAKE_LIB=$dir/libsnowflake.so: no such file", $out, 'message');
    } finally {
        remove_dir($dir);
    }
});

test('no library at all (a checkout without SNOWFLAKE_LIB, or a copy of the classes): the message says SNOWFLAKE_LIB', function () {
    $installed = array_filter(['/usr/local/lib', '/usr/local/lib64', '/usr/lib', '/usr/lib64', '/usr/local/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu'],
        fn ($d) => is_file("$d/libsnowflake.so"));
    $dir = temp_dir('sf-nolib');
    try {
        // The classes alone, as a Composer path repository copies them (no include/ above them).
        exec('cp -r ' . escapeshellarg(realpath(PACKAGE) . '/src') . ' ' . escapeshellarg(realpath(PACKAGE) . '/autoload.php') . ' ' . escapeshellarg($dir), $o, $st);
        assert_same(0, $st, 'copy');
        $probe = ' try { new Snowflake\Generator("twitter"); echo "loaded"; } catch (Snowflake\SnowflakeException $e) { echo $e->getMessage(); }';
        file_put_contents("$dir/copy.php", '<?php require ' . var_export("$dir/autoload.php", true) . ';' . $probe);
        file_put_contents("$dir/checkout.php", '<?php require ' . var_export(realpath(PACKAGE) . '/autoload.php', true) . ';' . $probe);
        $env = ['SNOWFLAKE_LIB' => '', 'SNOWFLAKE_HEADER' => '', 'LD_LIBRARY_PATH' => ''];
        foreach (['copy', 'checkout'] as $which) {
            [$status, $out] = run_php("$dir/$which.php", [], $env);
            if ($installed) {
                assert_same('loaded', $out, "$which: the installed library");
            } else {
                assert_true(str_contains($out, 'set SNOWFLAKE_LIB to the libsnowflake.so you built') && !str_contains($out, 'SNOWFLAKE_HEADER'),
                    "$which: SNOWFLAKE_LIB, not SNOWFLAKE_HEADER: $out");
            }
        }
    } finally {
        exec('rm -rf ' . escapeshellarg($dir));
    }
});

/**
 * Starts PHP-FPM (tests/servers: as root, workers as `nobody`; ready when a worker answers)
 * with `$iniLines` as php.ini, makes one request to `$script` through FastCGI, stops it;
 * returns the response body and FPM's log.
 *
 * @return array{string, string}
 */
function fpm_request(string $iniLines, string $script, array $serverArgs = []): array
{
    $cgi = trim((string) shell_exec('command -v cgi-fcgi'));
    if ($cgi === '') {
        fail('cgi-fcgi (apt: libfcgi-bin) is needed; scripts/install-deps.sh installs it');
    }
    $dir = temp_dir('sf-fpm');
    file_put_contents("$dir/php.ini", $iniLines);
    chmod("$dir/php.ini", 0644);
    try {
        $fpm = TestServers::start('fpm', ['--workers', '1', '--ini', "$dir/php.ini", ...$serverArgs], $dir);
    } catch (RuntimeException $e) {
        remove_dir($dir);
        return ['', $e->getMessage()];
    }
    try {
        $env = ['SCRIPT_FILENAME' => $script, 'REQUEST_METHOD' => 'GET', 'QUERY_STRING' => '', 'SERVER_PROTOCOL' => 'HTTP/1.1'];
        $p = proc_open([$cgi, '-bind', '-connect', $fpm->info['fpm']['socket']], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pp, null, $env);
        fclose($pp[0]);
        $response = (string) stream_get_contents($pp[1]);
        $response .= (string) stream_get_contents($pp[2]);
        proc_close($p);
        $log = @file_get_contents($fpm->info['fpm']['output']) . @file_get_contents($fpm->info['fpm']['log']);
    } finally {
        $fpm->stop();
        remove_dir($dir);
    }
    $body = ($pos = strpos($response, "\r\n\r\n")) !== false ? substr($response, $pos + 4) : $response;
    return [$body, (string) $log];
}

test('preload (PHP-FPM): the php.ini lines of docs/php.md, workers as nobody', function () {
    $dir = temp_dir('sf-fpm-header');
    try {
        [$status, $header] = run_php(realpath(PACKAGE) . '/bin/snowflake-preload-header');
        assert_same(0, $status, $header);
        file_put_contents("$dir/snowflake.h", $header);
        chmod("$dir/snowflake.h", 0644);
        $ini = str_replace(
            ['/etc/php/8.2/snowflake.h', '/var/www/vendor/libsnowflake/snowflake/preload.php', 'www-data'],
            ["$dir/snowflake.h", realpath(PACKAGE) . '/preload.php', 'nobody'],
            docs_ini_block(),
        );
        [$body, $log] = fpm_request($ini, realpath(__DIR__ . '/fixtures/preload_check.php'));
        assert_same(PRELOAD_OK, $body, "FPM response (log: $log)");
    } finally {
        remove_dir($dir);
    }
});

test('PHP-FPM without preloading: the error names the package\'s README and the command that prints the lines', function () {
    $ini = "ffi.enable = preload\nauto_prepend_file = " . realpath(PACKAGE) . "/autoload.php\ndisplay_errors = stdout\n";
    [$body, $log] = fpm_request($ini, realpath(__DIR__ . '/fixtures/preload_check.php'));
    foreach (['Snowflake\SnowflakeException', 'opcache.preload=' . realpath(PACKAGE) . '/preload.php',
        '`php ' . realpath(PACKAGE) . '/bin/snowflake-preload-header --ini`', 'see the PHP-FPM section of ' . realpath(PACKAGE) . '/README.md'] as $part) {
        assert_true(str_contains($body, $part), "`$part` in the response: $body (log: $log)");
    }
});

test('preload (PHP-FPM): the lines that snowflake-preload-header --ini prints, as they are', function () {
    $dir = temp_dir('sf-fpm-ini');
    try {
        $bin = realpath(PACKAGE) . '/bin/snowflake-preload-header';
        [$status, $ini] = run_php($bin, [], [], ['--ini', "--header=$dir/snowflake.h", '--user=nobody']);
        assert_same(0, $status, $ini);
        // Step 1 of its output: the command that writes the header.
        preg_match('/^;\s+(php .*)$/m', $ini, $m) === 1 || fail("no command in: $ini");
        exec($m[1], $o, $st);
        assert_same(0, $st, "`{$m[1]}`");
        chmod("$dir/snowflake.h", 0644);
        [$body, $log] = fpm_request($ini, realpath(__DIR__ . '/fixtures/preload_check.php'));
        assert_same(PRELOAD_OK, $body, "FPM response (log: $log)");
    } finally {
        remove_dir($dir);
    }
});

/** The ```ini block of docs/php.md's PHP-FPM section. */
/** Every `env[NAME] = value` line of an ```ini block in the docs and READMEs, as written. */
function docs_fpm_env_lines(): array
{
    $root = dirname(__DIR__, 2);
    $lines = [];
    foreach ([...glob("$root/docs/*.md"), "$root/README.md", "$root/ffi-c/php/README.md"] as $file) {
        preg_match_all('/^```ini\n(.*?)^```/ms', (string) file_get_contents($file), $blocks);
        foreach ($blocks[1] as $block) {
            foreach (explode("\n", $block) as $line) {
                if (str_starts_with($line, 'env[')) {
                    $lines[] = $line;
                }
            }
        }
    }
    return $lines;
}

test('PHP-FPM starts with the docs\' env[...] pool lines, as written, and the generator reads them', function () {
    $lines = docs_fpm_env_lines();
    assert_true(in_array('env[SNOWFLAKE_NODE] = "datacenter=1,worker=3"', $lines, true), 'the docs give the node values: ' . implode(' | ', $lines));
    $args = [];
    foreach ($lines as $line) {
        $args[] = "--pool-line=$line";
    }
    $ini = "ffi.enable = 1\nauto_prepend_file = " . realpath(PACKAGE) . "/autoload.php\ndisplay_errors = stdout\n";
    [$body, $log] = fpm_request($ini, realpath(__DIR__ . '/fixtures/fpm_env.php'), $args);
    $got = json_decode($body, true);
    assert_true(is_array($got), "FPM response: $body (log: $log)");
    assert_same('datacenter=1,worker=3', $got['SNOWFLAKE_NODE'], 'the variable as the workers see it');
    assert_same(['datacenter' => 1, 'worker' => 3], $got['fields'], 'the node values of the IDs');
    assert_same('SNOWFLAKE_NODE', $got['node'], 'their source');
    // What the issue met: the same line unquoted stops FPM from starting at all.
    [$body, $log] = fpm_request($ini, realpath(__DIR__ . '/fixtures/fpm_env.php'), ['--pool-line=env[SNOWFLAKE_NODE] = datacenter=1,worker=3']);
    assert_same('', $body, 'no response from an FPM that did not start');
    assert_true(str_contains($log, "unexpected '='"), "FPM's error: $log");
});

function docs_ini_block(): string
{
    $md = (string) file_get_contents(dirname(__DIR__, 2) . '/docs/php.md');
    if (preg_match('/^```ini\n(.*?)^```/ms', $md, $m) !== 1) {
        fail('docs/php.md has no ```ini block');
    }
    return $m[1];
}

test('library lookup: the header beside an installed library, SNOWFLAKE_HEADER, the loader path', function () {
    $dir = temp_dir('sf-prefix');
    try {
        mkdir("$dir/lib");
        mkdir("$dir/include");
        copy((string) getenv('SNOWFLAKE_LIB'), "$dir/lib/libsnowflake.so");
        copy(dirname(__DIR__, 2) . '/include/snowflake_php.h', "$dir/include/snowflake_php.h");
        assert_same("$dir/include/snowflake_php.h", Snowflake\Library::headerPath("$dir/lib/libsnowflake.so"), '<prefix>/include');
        putenv("SNOWFLAKE_HEADER=$dir/elsewhere.h");
        try {
            assert_same("$dir/elsewhere.h", Snowflake\Library::headerPath("$dir/lib/libsnowflake.so"), 'SNOWFLAKE_HEADER wins');
        } finally {
            putenv('SNOWFLAKE_HEADER');
        }
        // No SNOWFLAKE_LIB: the usual prefixes, else the dynamic loader (LD_LIBRARY_PATH here).
        file_put_contents("$dir/t.php", '<?php require ' . var_export(realpath(PACKAGE) . '/autoload.php', true) . ';'
            . ' $g = new Snowflake\Generator("twitter", ["datacenter" => 0, "worker" => 1]);'
            . ' echo Snowflake\Library::mode(), " ", Snowflake\Library::loadedPath(), " ", is_int($g->nextId()) ? "ok" : "no";');
        [$status, $out] = run_php("$dir/t.php", [], ['SNOWFLAKE_LIB' => '', 'LD_LIBRARY_PATH' => "$dir/lib"]);
        $installed = array_filter(['/usr/local/lib', '/usr/lib'], fn ($d) => is_file("$d/libsnowflake.so"));
        $expected = $installed ? reset($installed) . '/libsnowflake.so' : 'libsnowflake.so';
        assert_same([0, "cdef $expected ok"], [$status, $out], 'found without SNOWFLAKE_LIB');
    } finally {
        foreach (["$dir/lib/libsnowflake.so", "$dir/include/snowflake_php.h"] as $f) {
            @unlink($f);
        }
        @rmdir("$dir/lib");
        @rmdir("$dir/include");
        remove_dir($dir);
    }
});

test('an installed copy (make -C ffi-c install PREFIX=...): library and header found from SNOWFLAKE_LIB', function () {
    $prefix = temp_dir('sf-install');
    try {
        $root = dirname(__DIR__, 2);
        exec('make -s -C ' . escapeshellarg("$root/ffi-c") . ' install PREFIX=' . escapeshellarg($prefix) . ' 2>&1', $lines, $status);
        assert_same(0, $status, 'make install: ' . implode("\n", $lines));
        file_put_contents("$prefix/t.php", '<?php require ' . var_export(realpath(PACKAGE) . '/autoload.php', true) . ';'
            . ' $g = new Snowflake\Generator("discord", ["worker" => 1, "process" => 0]);'
            . ' echo Snowflake\Library::version(), " ", $g->layout->decode($g->nextId())->fields["worker"];');
        [$status, $out] = run_php("$prefix/t.php", [], ['SNOWFLAKE_LIB' => "$prefix/lib/libsnowflake.so", 'SNOWFLAKE_HEADER' => '']);
        assert_same([0, Snowflake\Library::version() . ' 1'], [$status, $out], 'the installed library');
        assert_same("$prefix/include/snowflake_php.h", Snowflake\Library::headerPath("$prefix/lib/libsnowflake.so"), 'its header');
    } finally {
        exec('rm -rf ' . escapeshellarg($prefix));
    }
});
