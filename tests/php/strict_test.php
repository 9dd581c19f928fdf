<?php

// Issue 13's stricter input, from PHP: a custom layout states its epoch, node values name
// every node field or none, bools, floats and strings are not node values (nor bools and
// floats IDs), a bad state_file fails when the generator is made (naming the
// path), and stats() say how long the layout has left.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\IoException;
use Snowflake\Layout;
use Snowflake\LayoutException;
use Snowflake\SnowflakeException;
use Snowflake\TypeException;
use Snowflake\ValueException;

const STRICT_T = 1700000000000;
const STRICT_FULL = ['datacenter' => 1, 'worker' => 3];

test('strict: a custom spec states its epoch; the error suggests today', function () {
    $today = gmdate('Y-m-d');
    $e = assert_throws(LayoutException::class, fn () => new Layout('time:41,worker:10,sequence:12'));
    assert_true(str_contains($e->getMessage(), 'must state its epoch'), $e->getMessage());
    assert_true(str_contains($e->getMessage(), ";epoch={$today}T00:00:00Z"), $e->getMessage());
    $suggested = explode('`', explode('`;', $e->getMessage())[1])[0];
    assert_true((new Layout("time:41,worker:10,sequence:12;$suggested"))->epochMs > 0, $suggested);
    assert_same(0, (new Layout('time:41,worker:10,sequence:12;epoch=0'))->epochMs, 'epoch=0');
});

test('strict: node values name every node field or none', function () {
    $twitter = new Layout('twitter');
    foreach ([[['datacenter' => 1], 'worker'], [['worker' => 3], 'datacenter']] as [$node, $missing]) {
        $e = assert_throws(ValueException::class, fn () => new Generator('twitter', $node, ['isolated' => true]), "missing $missing");
        assert_true(str_contains($e->getMessage(), "`$missing`") && str_contains($e->getMessage(), 'name every node field'), $e->getMessage());
        assert_same(SnowflakeException::STATUS_VALUE, $e->status, 'status');
        assert_throws(ValueException::class, fn () => $twitter->compose(STRICT_T, $node), "compose missing $missing");
    }
    $g = new Generator('twitter', STRICT_FULL, ['isolated' => true]);
    assert_same(STRICT_FULL, $twitter->decode($g->nextIdAt(STRICT_T))->fields, 'every field');
    $zero = new Generator('twitter', [], ['isolated' => true]);
    assert_same(['datacenter' => 0, 'worker' => 0], $twitter->decode($zero->nextIdAt(STRICT_T))->fields, 'none');
    $rolled = 'time:41,clock:2,worker:8,sequence:12;epoch=0';
    assert_true((new Generator($rolled, ['worker' => 3], ['rollover' => 'clock', 'isolated' => true]))->nextIdAt(STRICT_T) > 0, 'rollover left out');
    assert_throws(ValueException::class, fn () => new Generator($rolled, ['worker' => 3, 'clock' => 0], ['rollover' => 'clock', 'isolated' => true]), 'rollover given');
});

test('strict: bools, floats and strings are TypeExceptions naming the field', function () {
    foreach ([true, false, 1.0, 1.5, NAN, INF, '3', 'abc', ''] as $bad) {
        $e = assert_throws(TypeException::class, fn () => new Generator('twitter', ['datacenter' => 1, 'worker' => $bad]), 'worker ' . show($bad));
        assert_true(str_contains($e->getMessage(), 'worker'), $e->getMessage());
        assert_same(SnowflakeException::STATUS_TYPE, $e->status, 'status');
        assert_throws(TypeError::class, fn () => (new Layout('twitter'))->compose(STRICT_T, ['datacenter' => $bad, 'worker' => 1]), 'compose ' . show($bad));
    }
    $twitter = new Layout('twitter');
    foreach ([true, false, 1.0, 1.5, NAN] as $bad) {
        assert_throws(TypeError::class, fn () => $twitter->decode($bad), 'decode(' . show($bad) . ')');
    }
});

test('strict: a layout keeps only the text of node values it was given last, never for others', function () {
    // Layout::nodeSpec() keeps the last array's text (a generator per request gives the same
    // values each time): values equal but of another type, other values or another order are
    // each judged afresh.
    $twitter = new Layout('twitter');
    $at = fn (array $node) => $twitter->decode((new Generator($twitter, $node, ['isolated' => true]))->nextIdAt(STRICT_T))->fields;
    assert_same(['datacenter' => 1, 'worker' => 3], $at(['datacenter' => 1, 'worker' => 3]), 'first');
    assert_same(['datacenter' => 1, 'worker' => 3], $at(['datacenter' => 1, 'worker' => 3]), 'kept');
    assert_same(['datacenter' => 1, 'worker' => 4], $at(['datacenter' => 1, 'worker' => 4]), 'another value');
    assert_same(['datacenter' => 2, 'worker' => 1], $at(['worker' => 1, 'datacenter' => 2]), 'another order');
    assert_throws(TypeException::class, fn () => $at(['worker' => '1', 'datacenter' => 2]), 'the same value as a string');
    assert_throws(TypeException::class, fn () => $at(['worker' => 1.0, 'datacenter' => 2]), 'the same value as a float');
    assert_throws(ValueException::class, fn () => $at(['datacenter' => 2, 'worker' => 32]), 'out of range');
    assert_throws(ValueException::class, fn () => $at(['datacenter' => 2, 'worker' => 32]), 'out of range again');
});

test('strict: state_file problems fail at open, naming the path; the retired lease_dir and run_lock say why', function () {
    $dir = sys_get_temp_dir() . '/snowflake-php-strict-' . getmypid();
    @mkdir($dir, 0700, true);
    try {
        $missing = "$dir/no-such-dir/ids.state";
        $e = assert_throws(SnowflakeException::class, fn () => new Generator('twitter', STRICT_FULL, ['state_file' => $missing]), 'missing directory');
        assert_true(str_contains($e->getMessage(), $missing), $e->getMessage());
        assert_true(!file_exists("$dir/no-such-dir"), 'nothing was made');
        foreach (['/dev/null' => 'a character device', $dir => 'a directory'] as $notAFile => $what) {
            $e = assert_throws(Snowflake\StateFileException::class, fn () => new Generator('twitter', STRICT_FULL, ['state_file' => $notAFile]), "state_file=$notAFile");
            assert_true(str_contains($e->getMessage(), $what) && str_contains($e->getMessage(), $notAFile), $e->getMessage());
        }
        $file = "$dir/a-file";
        file_put_contents($file, '');
        $e = assert_throws(Snowflake\ValueException::class, fn () => new Generator('twitter', ['datacenter' => 1], ['lease' => 'local', 'lease_dir' => $file]), 'lease_dir');
        assert_true(str_contains($e->getMessage(), 'lease_dir was retired'), $e->getMessage());
        $e = assert_throws(Snowflake\ValueException::class, fn () => new Generator('twitter', STRICT_FULL, ['run_lock' => true]), 'run_lock');
        assert_true(str_contains($e->getMessage(), 'run_lock was retired'), $e->getMessage());
    } finally {
        @unlink("$dir/a-file");
        @rmdir($dir);
    }
});

test('strict: stats() say how long the layout has left', function () {
    $layout = new Layout('twitter');
    $s = (new Generator('twitter', STRICT_FULL, ['isolated' => true]))->stats();
    assert_same($layout->lastUnixMs, $s->lastUnixMs, 'lastUnixMs');
    $now = (int) (microtime(true) * 1000);
    assert_true(is_int($s->msLeft) && abs($s->msLeft - ($layout->lastUnixMs - $now)) < 60000, 'msLeft ' . show($s->msLeft));
    assert_true(abs($s->yearsLeft - $s->msLeft / (365.2425 * 86400000)) < 1e-9, 'yearsLeft ' . show($s->yearsLeft));
});
