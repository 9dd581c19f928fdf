<?php

// What a new user meets in the first hour (issue 29): node values as text, Parts::dateTime(),
// an application's own `Snowflake` class beside the package's namespace, and the PHP-FPM
// lines that the package prints for its own install.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\Layout;
use Snowflake\ValueException;

test('node values as text: the form C, Python, Node, the CLI and SNOWFLAKE_NODE take', function () {
    $text = new Generator('twitter', 'datacenter=1,worker=25', ['isolated' => true]);
    $array = new Generator('twitter', ['datacenter' => 1, 'worker' => 25], ['isolated' => true]);
    $twitter = new Layout('twitter');
    assert_same(['datacenter' => 1, 'worker' => 25], $twitter->decode($text->nextIdAt(1_700_000_000_000))->fields, 'text');
    assert_same($array->nextIdAt(1_700_000_000_000), $text->nextIdAt(1_700_000_000_000) - 1, 'the same identity, one after the other');
    assert_same($twitter->compose(1_700_000_000_000, ['datacenter' => 1, 'worker' => 25], 7),
        $twitter->compose(1_700_000_000_000, ' worker=25 , datacenter=1 ', 7), 'compose');
    $e = assert_throws(ValueException::class, fn () => new Generator('twitter', 'datacenter=1;worker=2'));
    assert_true(str_contains($e->getMessage(), 'node values are separated by `,`'), $e->getMessage());
    $e = assert_throws(ValueException::class, fn () => new Generator('twitter', 'worker=2'));
    assert_true(str_contains($e->getMessage(), 'no value for `datacenter`'), $e->getMessage());
    $e = assert_throws(ValueException::class, fn () => new Generator('twitter', 'datacenter=1,worker=32'));
    assert_true(str_contains($e->getMessage(), 'worker = 32 is out of range'), $e->getMessage());
});

test('Parts::dateTime(): a UTC DateTimeImmutable with the milliseconds', function () {
    $discord = new Layout('discord');
    $date = $discord->decode('175928847299117063')->dateTime();
    assert_true($date instanceof DateTimeImmutable, 'a DateTimeImmutable');
    assert_same('2016-04-30T11:18:25.796+00:00', $date->format(DATE_RFC3339_EXTENDED), 'the date');
    assert_same('+00:00', $date->format('P'), 'UTC');
    // Every millisecond survives, the first and last of a second too.
    $twitter = new Layout('twitter');
    foreach ([1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_999, $twitter->epochMs] as $ms) {
        $d = $twitter->decode($twitter->minId($ms))->dateTime();
        assert_same($ms, (int) $d->format('U') * 1000 + (int) $d->format('v'), "ms of $ms");
    }
});

test('an application class named Snowflake lives beside the Snowflake\\ namespace', function () {
    $dir = sys_get_temp_dir() . '/sf-ns-' . getmypid();
    @mkdir($dir);
    try {
        file_put_contents("$dir/t.php", '<?php require ' . var_export(dirname(__DIR__, 2) . '/ffi-c/php/autoload.php', true) . ";\n"
            . "final class Snowflake { public static function make(): int { return (new Snowflake\\Generator('twitter', 'datacenter=1,worker=26'))->nextId(); } }\n"
            . "echo is_int(Snowflake::make()) ? 'ok' : 'no';\n");
        [$status, $out] = run_php("$dir/t.php");
        assert_same([0, 'ok'], [$status, $out], 'output');
    } finally {
        @unlink("$dir/t.php");
        @rmdir($dir);
    }
});

test('snowflake-preload-header --ini: the five php.ini lines of this install', function () {
    $package = (string) realpath(dirname(__DIR__, 2) . '/ffi-c/php');
    [$status, $out] = run_php("$package/bin/snowflake-preload-header", [], [], ['--ini', '--header=/srv/h/snowflake.h', '--user=nobody']);
    assert_same(0, $status, $out);
    $settings = [];
    foreach (explode("\n", $out) as $line) {
        if (preg_match('/^([a-z_.]+) = (.*)$/', $line, $m) === 1) {
            $settings[$m[1]] = $m[2];
        }
    }
    assert_same([
        'ffi.enable' => 'preload',
        'ffi.preload' => '/srv/h/snowflake.h',
        'opcache.enable' => '1',
        'opcache.preload' => "$package/preload.php",
        'opcache.preload_user' => 'nobody',
    ], $settings, 'the settings');
    assert_true(str_contains($out, "$package/bin/snowflake-preload-header' > '/srv/h/snowflake.h'"), "the command that writes the header: $out");
    // The package's README shows the same five settings.
    preg_match('/^```ini\n(.*?)^```/ms', (string) file_get_contents("$package/README.md"), $m) === 1 || fail('README.md has no ```ini block');
    preg_match_all('/^([a-z_.]+) = /m', $m[1], $keys);
    assert_same(array_keys($settings), $keys[1], 'README.md names the same settings');
    [$status, $out] = run_php("$package/bin/snowflake-preload-header", [], [], ['--ini', '--header=relative.h']);
    assert_same(1, $status, 'a relative header path is refused');
    assert_true(str_contains($out, 'php.ini needs an absolute path'), $out);
    [$status, $out] = run_php("$package/bin/snowflake-preload-header", [], [], ['--bogus']);
    assert_same(2, $status, "an unknown argument: $out");
});
