<?php

// docs/php.md's example, run as written (with the package's autoloader for Composer's).

declare(strict_types=1);

use Snowflake\Id;
use Snowflake\Layout;

test('docs/php.md: the example runs and prints what the page says', function () {
    $md = (string) file_get_contents(dirname(__DIR__, 2) . '/docs/php.md');
    preg_match('/^```php\n(.*?)^```\s*\nprints[^\n]*\n\s*```text\n(.*?)^```/ms', $md, $m) === 1 || fail('no ```php block followed by its output');
    [, $code, $shown] = $m;
    $vendor = "require __DIR__ . '/vendor/autoload.php';";
    str_contains($code, $vendor) || fail("the example does not start with $vendor");
    $code = str_replace($vendor, 'require ' . var_export(realpath(dirname(__DIR__, 2) . '/ffi-c/php/autoload.php'), true) . ';', $code);
    $base = (string) tempnam(sys_get_temp_dir(), 'sf-doc');
    $file = "$base.php";
    file_put_contents($file, $code);
    try {
        [$status, $out] = run_php($file);
    } finally {
        unlink($file);
        unlink($base);
    }
    assert_same(0, $status, "exit status; output: $out");
    $got = explode("\n", rtrim($out, "\n"));
    $want = explode("\n", rtrim($shown, "\n"));
    assert_same(count($want), count($got), "lines: $out");
    // The first two lines hold a fresh ID: same shape as shown, and consistent with each other.
    $line = '/^(\d+): unix_ms=(\d+) worker=3 sequence=(\d+) at (\S+)$/';
    preg_match($line, $got[0], $id) === 1 || fail("line 1: {$got[0]}");
    preg_match($line, $want[0], $wantId) === 1 || fail("docs line 1: {$want[0]}");
    $twitter = new Layout('twitter');
    foreach ([$id, $wantId] as [, $i, $ms, $seq, $date]) {
        $parts = $twitter->decode($i);
        assert_same([(int) $ms, (int) $seq], [$parts->unixMs, $parts->sequence], "decode of $i");
        // The date of the same instant, to the millisecond.
        $at = new DateTimeImmutable($date);
        assert_same((int) $ms, (int) $at->format('U') * 1000 + (int) $at->format('v'), "the date of $i");
    }
    assert_same(Id::encode($id[1], 'base62'), $got[1], 'line 2 is the base62 of line 1');
    assert_same(Id::encode($wantId[1], 'base62'), $want[1], 'the docs\' line 2 is the base62 of their line 1');
    assert_same(array_slice($want, 2), array_slice($got, 2), 'the rest, exactly');
});
