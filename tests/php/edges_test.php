<?php

declare(strict_types=1);

// Issue 26's defects at the edges, in PHP: counts that overflowed the heap (FFI keeps the low
// 32 bits of an array length) or raised FFI's own exceptions, arguments of the wrong type that
// raised a plain \TypeError or InvalidIdException, a time far ahead that locked an identity
// out, and the message of a time behind the state.

use Snowflake\ClockBehindException;
use Snowflake\Generator;
use Snowflake\Layout;
use Snowflake\SnowflakeException;
use Snowflake\TimeRangeException;
use Snowflake\TypeException;
use Snowflake\ValueException;

const EDGES_2080_MS = 3471292800000;

test('MAX_IDS_PER_CALL is core\'s', function () {
    assert_same(vectors('tables')['limits']['max_ids_per_call'], Generator::MAX_IDS_PER_CALL, 'the constant');
});

test('huge counts are a ValueException at once, in a process that lives on', function () {
    // Before: nextIds(2**32 + 1) overflowed the heap (SIGSEGV), nextIds(PHP_INT_MAX) raised
    // FFI\ParserException and nextIds(2**40) FFI\Exception. A child process runs them, so
    // that the old crash fails here.
    $dir = sys_get_temp_dir() . '/snowflake-edges-' . getmypid();
    @mkdir($dir);
    $script = "$dir/counts.php";
    file_put_contents($script, '<?php
declare(strict_types=1);
require ' . var_export(dirname(__DIR__, 2) . '/ffi-c/php/autoload.php', true) . ';
$g = new Snowflake\Generator("twitter", [], ["isolated" => true]);
foreach ([2 ** 32 + 1, 2 ** 32 - 1, 2 ** 40, PHP_INT_MAX, Snowflake\Generator::MAX_IDS_PER_CALL + 1] as $n) {
    try {
        $g->nextIds($n);
        echo "accepted $n\n";
    } catch (Snowflake\ValueException $e) {
        if (!str_contains($e->getMessage(), "the largest allowed is " . Snowflake\Generator::MAX_IDS_PER_CALL)) {
            echo "message: ", $e->getMessage(), "\n";
        }
    }
}
$ids = $g->nextIds(150000); // three chunks of the kept buffer
echo count($ids) === 150000 && $ids === array_values(array_unique($ids)) ? "ok\n" : "bad ids\n";
');
    [$status, $out] = run_php($script);
    @unlink($script);
    @rmdir($dir);
    assert_same([0, "ok\n"], [$status, $out], 'the child');
});

test('counts, times and keys of the wrong type are Snowflake\TypeException', function () {
    $g = new Generator('twitter', [], ['isolated' => true]);
    foreach ([
        'nextIds(\'5\')' => fn () => $g->nextIds('5'),
        'nextIds(5.0)' => fn () => $g->nextIds(5.0),
        'nextIds(true)' => fn () => $g->nextIds(true),
        'nextIds(null)' => fn () => $g->nextIds(null),
        'reserve(\'5\')' => fn () => $g->reserve('5'),
        'reserve(2.0)' => fn () => $g->reserve(2.0),
        'nextIdAt(\'1e3\')' => fn () => $g->nextIdAt('1e3'),
        'nextIdAt(\' 1000\')' => fn () => $g->nextIdAt(' 1000'),
        'nextIdAt(1.5)' => fn () => $g->nextIdAt(1.5),
        'minId(\'1e3\')' => fn () => (new Layout('twitter'))->minId('1e3'),
    ] as $what => $f) {
        $e = assert_throws(TypeException::class, $f, $what);
        assert_same('ERR_SNOWFLAKE_TYPE', $e->statusCode, "$what: code");
        assert_same(SnowflakeException::STATUS_TYPE, $e->status, "$what: status");
    }
    assert_true(str_contains(assert_throws(TypeException::class, fn () => $g->nextIds('5'))->getMessage(), '`n` must be a whole number, not string'), 'names n');
    assert_true(str_contains(assert_throws(TypeException::class, fn () => $g->nextIdAt('1e3'))->getMessage(), '`unix_ms`'), 'names unix_ms');
    // A decimal string is still a time (as for every unsigned value of the package).
    assert_same(1700000000000, (new Layout('twitter'))->decode($g->nextIdAt('1700000000000'))->unixMs, 'a decimal string');
});

test('negative counts are a ValueException, negative times a TimeRangeException', function () {
    $g = new Generator('twitter', [], ['isolated' => true]);
    assert_true(str_contains(assert_throws(ValueException::class, fn () => $g->nextIds(-1))->getMessage(), 'n = -1 is out of range: the smallest allowed is 0'), 'nextIds(-1)');
    assert_throws(ValueException::class, fn () => $g->reserve(-1), 'reserve(-1)');
    assert_throws(ValueException::class, fn () => $g->reserve(0), 'reserve(0)');
    assert_same([], $g->nextIds(0), 'nextIds(0)');
    $e = assert_throws(TimeRangeException::class, fn () => $g->nextIdAt(-1), 'nextIdAt(-1)');
    assert_true(str_contains($e->getMessage(), 'time -1 (Unix ms) is before 1970'), $e->getMessage());
    assert_throws(TimeRangeException::class, fn () => (new Layout('twitter'))->minId(-5), 'minId(-5)');
    assert_throws(TimeRangeException::class, fn () => $g->nextIdAt(0), 'nextIdAt(0): before the epoch');
});

test('a public-ID key of another length is refused before any buffer is sized by it', function () {
    foreach ([0, 15, 17, 1000] as $len) {
        $e = assert_throws(ValueException::class, fn () => new Snowflake\PublicIds(str_repeat('k', $len)), "$len bytes");
        assert_true(str_contains($e->getMessage(), "key of $len bytes"), $e->getMessage());
    }
});

test('a time far ahead is refused where the state is shared; one behind says why', function () {
    $layout = 'time:41,worker:10,sequence:12;epoch=1288834974657';
    $g = new Generator($layout, ['worker' => 904], ['max_wait_ms' => 0]);
    $e = assert_throws(ValueException::class, fn () => $g->nextIdAt(EDGES_2080_MS), '2080');
    assert_true(str_contains($e->getMessage(), 'years ahead of the clock') && str_contains($e->getMessage(), '`isolated` set to true'), $e->getMessage());
    $g->nextId(); // not locked out
    $lone = new Generator($layout, ['worker' => 904], ['isolated' => true]);
    assert_same(EDGES_2080_MS, (new Layout($layout))->decode($lone->nextIdAt(EDGES_2080_MS))->unixMs, 'isolated');

    $weekAgo = (int) (microtime(true) * 1000) - 561600000;
    $e = assert_throws(ClockBehindException::class, fn () => $g->nextIdAt($weekAgo), 'a week ago');
    $text = $e->getMessage();
    assert_true(str_contains($text, "behind this identity's state") && str_contains($text, 'could repeat'), $text);
    assert_true(str_contains($text, 'replays and backfills need a generator with `isolated` set to true'), $text);
    assert_true(!str_contains($text, 'retry in'), $text);
});

test('random counts up to 2^64 and of every type (seeded)', function () {
    $seed = (int) (getenv('SNOWFLAKE_FUZZ_SEED') ?: 20261124);
    mt_srand($seed);
    $g = new Generator('twitter', [], ['isolated' => true]);
    $max = Generator::MAX_IDS_PER_CALL;
    $issued = 0;
    for ($i = 0; $i < 2000; $i++) {
        $n = match (mt_rand(0, 9)) {
            0, 1, 2 => mt_rand(0, 3000),
            3 => mt_rand($max + 1, PHP_INT_MAX),
            4 => PHP_INT_MAX - mt_rand(0, 3),
            5 => -mt_rand(1, PHP_INT_MAX),
            6 => 2 ** mt_rand(28, 70) + 0.0, // floats, to 2^64 and past
            7 => (string) mt_rand(0, 100),
            8 => [true, null, NAN, INF, [], new stdClass()][mt_rand(0, 5)],
            9 => PHP_INT_MIN,
        };
        $what = "seed $seed, case $i: " . show($n);
        foreach (['nextIds' => [0, $max], 'reserve' => [1, PHP_INT_MAX]] as $method => [$lo, $hi]) {
            try {
                $got = $g->$method($n);
            } catch (TypeException $e) {
                assert_true(!is_int($n), "$what: $method refused an int's type");
                continue;
            } catch (ValueException $e) {
                assert_true(is_int($n) && ($n < $lo || $n > $hi), "$what: $method: " . $e->getMessage());
                continue;
            } catch (\Throwable $e) {
                fail("$what: $method threw " . get_class($e) . ': ' . $e->getMessage());
            }
            assert_true(is_int($n) && $n >= $lo && $n <= $hi, "$what: $method accepted it");
            if ($method === 'nextIds') {
                assert_same($n, count($got), "$what: count");
                $issued++;
            } else {
                assert_true($got->count >= 1 && $got->count <= $n, "$what: block");
            }
        }
    }
    assert_true($issued > 300, "$issued counts issued");
});
