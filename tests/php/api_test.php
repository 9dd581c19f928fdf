<?php

// The PHP binding's own behaviour: PHP types in and out, every exception class, NUL and
// bad input, uniqueness under load, fork.

declare(strict_types=1);

use Snowflake\Block;
use Snowflake\ClockBehindException;
use Snowflake\ClockException;
use Snowflake\ForkedException;
use Snowflake\Generator;
use Snowflake\Id;
use Snowflake\InternalException;
use Snowflake\InvalidIdException;
use Snowflake\Layout;
use Snowflake\LayoutException;
use Snowflake\Library;
use Snowflake\SequenceExhaustedException;
use Snowflake\SnowflakeException;
use Snowflake\TimeRangeException;
use Snowflake\ValueException;

const ABOVE_INT_MAX = '9223372036854775808'; // 2^63

function is_above_int_max(mixed $id): bool
{
    return is_string($id) && preg_match('/^[1-9][0-9]{18,19}$/D', $id) === 1
        && (strlen($id) === 20 || strcmp($id, ABOVE_INT_MAX) >= 0);
}

/** Compares two unsigned decimal strings numerically. */
function u64_cmp(string $a, string $b): int
{
    return strlen($a) <=> strlen($b) ?: strcmp($a, $b) <=> 0;
}

test('library: loaded through cdef from SNOWFLAKE_LIB, version from Cargo', function () {
    preg_match('/^version = "([^"]+)"/m', (string) file_get_contents(dirname(__DIR__, 2) . '/Cargo.toml'), $m);
    assert_same($m[1], Library::version(), 'snowflake_version()');
    assert_same('cdef', Library::mode(), 'mode');
    assert_same(realpath((string) getenv('SNOWFLAKE_LIB')), realpath(Library::loadedPath()), 'path');
});

test('63-bit layouts give ints; IDs and node values round-trip', function () {
    $g = new Generator('twitter', ['datacenter' => 1, 'worker' => 3], ['max_wait_ms' => 0]);
    $id = $g->nextId();
    assert_true(is_int($id) && $id > 0, 'nextId() is a positive int: ' . show($id));
    $p = $g->layout->decode($id);
    assert_same(['datacenter' => 1, 'worker' => 3], $p->fields, 'node fields');
    assert_true(abs($p->unixMs - (int) (microtime(true) * 1000)) < 5000, 'unixMs is now');
    foreach ($g->nextIds(100) as $next) {
        assert_true(is_int($next) && $next > $id, 'nextIds() are increasing ints');
        $id = $next;
    }
});

test('64-bit layouts: IDs above PHP_INT_MAX are decimal strings, never negative or float', function () {
    foreach (['discord', 'mastodon', 'instagram', 'game'] as $spec) {
        $l = new Layout($spec);
        assert_same(64, $l->totalBits, "$spec is 64-bit");
        // The first instant whose IDs have the top bit set, and the layout's last one.
        $top = $l->fields[0];
        $halfway = ($l->epochMs + (1 << ($top->bits - 1)) * $l->tickMs);
        $g = new Generator($l, [], ['isolated' => true, 'max_wait_ms' => 0]);
        $before = $g->nextIdAt($halfway - 1);
        $id = $g->nextIdAt($halfway);
        assert_true(is_int($before) && $before > 0, "$spec just below 2^63: an int " . show($before));
        assert_true(is_above_int_max($id), "$spec from 2^63 on: a decimal string, got " . show($id));
        assert_same($halfway, $l->decode($id)->unixMs, "$spec decode of a string ID");
        assert_same($id, Id::decode(Id::encode($id, 'base62'), 'base62'), "$spec base62 round trip");
        assert_same($l->minId($halfway), $id, "$spec minId is the first ID of the tick");
        $last = $g->nextIdAt($l->lastUnixMs);
        assert_true(is_above_int_max($last) && u64_cmp($last, $id) > 0, "$spec last instant " . show($last));
        assert_same($last, $l->decode($last)->id, "$spec decode keeps the string");
    }
    $discord = new Layout('discord');
    assert_same('18446744073709551615', $discord->maxId($discord->lastUnixMs), 'the largest ID is 2^64 - 1');
    assert_same(PHP_INT_MAX, Id::decode('7fffffffffffffff', 'hex'), 'PHP_INT_MAX stays an int');
    assert_same(ABOVE_INT_MAX, Id::decode('8000000000000000', 'hex'), '2^63 is a string');
    assert_same('18446744073709551615', Id::decode('0', 'decimal', true), 'reverse of 0');
    assert_same('8000000000000000', Id::encode(ABOVE_INT_MAX, 'hex'), 'encode a string ID');
});

test('IDs in: ints >= 0 and decimal strings only', function () {
    $l = new Layout('twitter');
    assert_same(1, $l->decode('4194305')->tick, 'a decimal string');
    assert_same(1, $l->decode('0004194305')->tick, 'leading zeros');
    assert_throws(ValueException::class, fn () => $l->decode(-1), 'a negative int');
    assert_throws(ValueException::class, fn () => Id::encode(PHP_INT_MIN), 'PHP_INT_MIN');
    foreach ([1.0, 4194305.0, 1.5, true, null, [], new stdClass()] as $bad) {
        assert_throws(TypeError::class, fn () => $l->decode($bad), 'decode(' . get_debug_type($bad) . ')');
        assert_throws(TypeError::class, fn () => Id::encode($bad), 'encode(' . get_debug_type($bad) . ')');
    }
    foreach (['', ' 1', '1 ', '+1', '-1', '0x10', '1e3', '1.0', '18446744073709551616', '99999999999999999999'] as $bad) {
        assert_throws(InvalidIdException::class, fn () => $l->decode($bad), 'decode(' . show($bad) . ')');
    }
    assert_throws(InvalidIdException::class, fn () => $l->decode(ABOVE_INT_MAX), 'beyond the 63-bit layout');
    assert_throws(InvalidIdException::class, fn () => $l->decode("4194305\0"), 'a NUL byte');
    assert_throws(InvalidIdException::class, fn () => Id::decode("00000000000\0", 'base62'), 'a NUL byte in text');
    assert_throws(ValueException::class, fn () => Id::encode(1, 'base64'), 'unknown encoding');
    assert_throws(ValueException::class, fn () => Id::encode(1, "hex\0"), 'NUL in the encoding');
    assert_throws(TypeError::class, fn () => (new Generator('twitter', [], ['isolated' => true]))->nextIdAt(1.7e12), 'a float instant');
    assert_throws(TimeRangeException::class, fn () => $l->minId(-5), 'a negative instant (issue 26: as in every language)');
});

test('node values are checked in PHP: field, value and max named, nothing truncated', function () {
    $e = assert_throws(ValueException::class, fn () => new Generator('twitter', ['datacenter' => 0, 'worker' => 32]));
    assert_same('worker = 32 is out of range: the largest allowed is 31', $e->getMessage(), 'message');
    assert_same(SnowflakeException::STATUS_VALUE, $e->status, 'status');
    assert_same('ERR_SNOWFLAKE_VALUE', $e->statusCode, 'code');
    // 2^32 + 3 would be 3 in a uint32_t, 2^64 + 3 does not exist; both must fail, not wrap.
    foreach ([-1, 32, (1 << 32) + 3, PHP_INT_MAX] as $v) {
        $e = assert_throws(ValueException::class, fn () => new Generator('twitter', ['datacenter' => 0, 'worker' => $v]), "worker $v");
        // Core's message, as in every front end: below the range says its smallest.
        $bound = $v < 0 ? 'the smallest allowed is 0' : 'the largest allowed is 31';
        assert_true(str_contains($e->getMessage(), "worker = $v") && str_contains($e->getMessage(), $bound), $e->getMessage());
        assert_throws(ValueException::class, fn () => (new Layout('twitter'))->compose(1700000000000, ['datacenter' => 0, 'worker' => $v]), "compose worker $v");
    }
    foreach (['3', 3.0, true, null, [3]] as $v) {
        assert_throws(TypeError::class, fn () => new Generator('twitter', ['datacenter' => 0, 'worker' => $v]), 'worker ' . show($v));
    }
    assert_throws(ValueException::class, fn () => new Generator('twitter', ['shard' => 1]), 'unknown field');
    assert_throws(ValueException::class, fn () => new Generator('twitter', ['sequence' => 1]), 'not a node field');
    assert_throws(ValueException::class, fn () => new Generator('twitter', ['time' => 1]), 'not a node field');
    assert_throws(ValueException::class, fn () => new Generator('twitter', [3]), 'a list instead of names');
    // A 62-bit node field: the largest value fits a PHP int and goes through exactly.
    $wide = new Layout('time:1,node:62,sequence:1;epoch=0');
    $id = $wide->compose(0, ['node' => (1 << 62) - 1], 1);
    assert_same((1 << 62) - 1, $wide->decode($id)->fields['node'], '62-bit node value');
});

test('options: PHP types checked, names and ranges by the library', function () {
    $g = fn (array $o) => new Generator('twitter', ['datacenter' => 0, 'worker' => 1], $o + ['isolated' => true]);
    $g(['max_wait_ms' => 0, 'max_drift_ms' => 50, 'sequence_start' => 'spread:16', 'rollover' => null]);
    // The rollover field is the generator's: the node values leave it out.
    new Generator('twitter', ['worker' => 1], ['rollover' => 'datacenter', 'isolated' => true]);
    assert_throws(ValueException::class, fn () => $g(['rollover' => 'datacenter']), 'rollover field given');
    foreach ([['max_wait_ms' => 1.5], ['max_wait_ms' => '0'], ['isolated' => 'yes'], ['max_drift_ms' => true],
              ['sequence_start' => 16], ['rollover' => 1]] as $o) {
        assert_throws(TypeError::class, fn () => $g($o), 'option ' . show($o));
    }
    foreach ([['max_wait_ms' => -1], ['bogus' => 1], ['Max_Wait_Ms' => 1], ['sequence_start' => 'spread:0'],
              ['sequence_start' => 'spread:16;isolated=false'], ['rollover' => 'nosuch'], ['rollover' => 'sequence'],
              ['sequence_start' => "zero\0"], [5 => 1]] as $o) {
        assert_throws(ValueException::class, fn () => $g($o), 'option ' . show($o));
    }
    $e = assert_throws(ValueException::class, fn () => $g(['bogus' => 1]));
    assert_true(str_contains($e->getMessage(), 'bogus'), 'the library names the unknown option: ' . $e->getMessage());
});

test('every exception class, with status, code and detail', function () {
    $e = assert_throws(LayoutException::class, fn () => new Layout('time:41,sequence:0'));
    assert_same([3, 'ERR_SNOWFLAKE_LAYOUT'], [$e->status, $e->statusCode], 'layout');
    assert_true(str_contains($e->detail, 'zero width') && $e->getMessage() === $e->detail && $e->getCode() === 3, $e->detail);

    $e = assert_throws(InvalidIdException::class, fn () => Id::decode('zzz', 'hex'));
    assert_same([5, 'ERR_SNOWFLAKE_INVALID_ID'], [$e->status, $e->statusCode], 'invalid id');

    $l = new Layout('time:41,worker:10,sequence:1;epoch=0;tick=1ms');
    $g = new Generator($l, ['worker' => 7], ['isolated' => true, 'max_wait_ms' => 0]);
    $e = assert_throws(TimeRangeException::class, fn () => (new Generator('twitter', [], ['isolated' => true]))->nextIdAt(1000));
    assert_same([6, 'ERR_SNOWFLAKE_TIME_RANGE'], [$e->status, $e->statusCode], 'time range');
    assert_true(str_contains($e->detail, 'before the layout'), $e->detail);

    $g->nextIdAt(5000);
    $g->nextIdAt(5000);
    $e = assert_throws(SequenceExhaustedException::class, fn () => $g->nextIdAt(5000));
    assert_same([8, 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED', 1], [$e->status, $e->statusCode, $e->retryAfterMs], 'exhausted');
    assert_true($e instanceof ClockException, 'a ClockException');

    $g->nextIdAt(6000);
    $e = assert_throws(ClockBehindException::class, fn () => $g->nextIdAt(5990));
    assert_same([7, 'ERR_SNOWFLAKE_CLOCK_BEHIND', 10], [$e->status, $e->statusCode, $e->retryAfterMs], 'behind');
    assert_true(str_contains($e->detail, '10 ms behind'), $e->detail);
    assert_same(6000, $l->decode($g->nextIdAt(6000))->unixMs, 'the clock caught up');
    $stats = $g->stats();
    assert_same([4, 1], [$stats->issued, $stats->clockBehind], 'stats count the issued IDs and the step back');

    $e = assert_throws(ValueException::class, fn () => new Layout("time:41,\xff:5,sequence:12"));
    assert_same(SnowflakeException::STATUS_INVALID_UTF8, $e->status, 'invalid UTF-8 is status 2');

    // Statuses bad input cannot cause: hand the raw API a NULL and a short buffer.
    $ffi = Library::ffi();
    $out = $ffi->new('uint64_t');
    $e = SnowflakeException::fromStatus($ffi->snowflake_next_id(null, FFI::addr($out)));
    assert_true($e instanceof InternalException && $e->status === 1, 'NULL is an InternalException: ' . get_class($e));
    $buf = $ffi->new('char[4]');
    $e = SnowflakeException::fromStatus($ffi->snowflake_encode(1, 'hex', false, $buf, 4));
    assert_true($e instanceof InternalException && $e->status === 10, 'a short buffer is an InternalException');

    $expected = [1 => InternalException::class, 2 => ValueException::class, 3 => LayoutException::class,
        4 => ValueException::class, 5 => InvalidIdException::class, 6 => TimeRangeException::class,
        7 => ClockBehindException::class, 8 => SequenceExhaustedException::class, 9 => ForkedException::class,
        10 => InternalException::class, 11 => InternalException::class, 12 => Snowflake\SharedMismatchException::class,
        13 => Snowflake\LeaseException::class, 14 => Snowflake\StateFileException::class, 15 => Snowflake\IoException::class,
        16 => Snowflake\TypeException::class, 17 => Snowflake\BusyException::class];
    foreach ($expected as $status => $class) {
        $e = SnowflakeException::fromStatus($status);
        assert_same($class, get_class($e), "status $status");
        assert_same($status, $e->status, "status $status kept");
        assert_true($e->statusCode !== '' && $e->getMessage() !== '', "status $status has a code and a message");
    }
});

test('NUL bytes never reach C (they would cut the string)', function () {
    assert_throws(LayoutException::class, fn () => new Layout("twitter\0garbage"), 'spec');
    assert_throws(ValueException::class, fn () => new Generator('twitter', [], ['rollover' => "worker\0"]), 'option');
    assert_throws(ValueException::class, fn () => Id::decode('1', "decimal\0"), 'encoding');
});

test('1M IDs from nextId() and 1M from nextIds(1000): unique and increasing', function () {
    $g = new Generator('twitter', ['datacenter' => 2, 'worker' => 9]);
    $prev = $g->nextId();
    for ($i = 0; $i < 1000000; $i++) {
        $id = $g->nextId();
        if ($id <= $prev) {
            fail("nextId #$i: $id after $prev");
        }
        $prev = $id;
    }
    $seen = [];
    for ($b = 0; $b < 1000; $b++) {
        $ids = $g->nextIds(1000);
        if (count($ids) !== 1000 || $ids[0] <= $prev) {
            fail("batch $b starts at {$ids[0]} after $prev");
        }
        for ($i = 1; $i < 1000; $i++) {
            if ($ids[$i] <= $ids[$i - 1]) {
                fail("batch $b: {$ids[$i]} after {$ids[$i - 1]}");
            }
        }
        $prev = $ids[999];
        $seen += array_flip($ids);
    }
    assert_same(1000000, count($seen), 'distinct IDs');
    assert_same(2000001, $g->stats()->issued, 'issued');
});

test('generators with the same node share one state: no repeat across instances', function () {
    $a = new Generator('twitter', ['datacenter' => 0, 'worker' => 17]);
    $b = new Generator(new Layout('twitter'), ['datacenter' => 0, 'worker' => 17]);
    $prev = 0;
    for ($i = 0; $i < 20000; $i++) {
        $id = $i % 3 === 0 ? $b->nextId() : $a->nextId();
        if ($id <= $prev) {
            fail("$id after $prev");
        }
        $prev = $id;
    }
});

test('reserve() blocks and Block::ids(), also across 2^63', function () {
    $g = new Generator('twitter', ['datacenter' => 0, 'worker' => 5], ['max_wait_ms' => 100]);
    $block = $g->reserve(10);
    assert_true($block->count >= 1 && $block->count <= 10 && $block->stride === 1, 'block ' . show($block));
    $ids = $block->ids();
    assert_same($block->count, count($ids), 'ids()');
    assert_same($ids, iterator_to_array($block), 'iteration');
    assert_true($g->nextId() > end($ids), 'nextId() after the block');
    assert_throws(ValueException::class, fn () => $g->reserve(0), 'reserve(0)');
    assert_throws(ValueException::class, fn () => $g->reserve(-1), 'reserve(-1)');
    assert_throws(TypeError::class, fn () => $g->reserve('3'), "reserve('3')");
    $cross = new Block(PHP_INT_MAX - 4, 4, 2);
    assert_same([PHP_INT_MAX - 4, PHP_INT_MAX - 2, PHP_INT_MAX, '9223372036854775809'], $cross->ids(), 'across 2^63');
    assert_same(['18446744073709551612', '18446744073709551614'], (new Block('18446744073709551612', 2, 2))->ids(), 'at the top');
});

test('nextIds(): 0, negative, wrong type, larger than the kept buffer', function () {
    $g = new Generator('twitter', ['datacenter' => 0, 'worker' => 6]);
    assert_same([], $g->nextIds(0), 'nextIds(0)');
    assert_throws(ValueException::class, fn () => $g->nextIds(-1), 'nextIds(-1)');
    assert_throws(TypeError::class, fn () => $g->nextIds('10'), "nextIds('10')");
    assert_throws(TypeError::class, fn () => $g->nextIds(10.0), 'nextIds(10.0)');
    $ids = $g->nextIds(100000);
    assert_same(100000, count(array_unique($ids)), 'unique');
    $small = $g->nextIds(3);
    assert_true($small[0] > $ids[99999] && count($small) === 3, 'a smaller batch after a larger one');
});

test('tryNextId() fails at once where nextId() would wait', function () {
    $l = new Layout('time:41,worker:10,sequence:1;epoch=0;tick=1s');
    $g = new Generator($l, ['worker' => 1], ['max_wait_ms' => 0, 'isolated' => true]);
    // Two IDs a second: within a few calls one must find its second full (a slow machine can
    // cross into the next second once, not every time).
    for ($i = 0; $i < 10; $i++) {
        try {
            $g->tryNextId();
        } catch (SequenceExhaustedException $e) {
            assert_true($i >= 2 && $e->retryAfterMs > 0 && $e->retryAfterMs <= 1000, "call $i, retry after {$e->retryAfterMs} ms");
            return;
        }
    }
    fail('10 IDs from 2-ID one-second ticks without a SequenceExhaustedException');
});

test('a process_only generator inherited through fork() refuses to issue (ForkedException)', function () {
    $g = new Generator('twitter', ['datacenter' => 0, 'worker' => 11], ['process_only' => true]);
    $parentId = $g->nextId();
    $file = tempnam(sys_get_temp_dir(), 'sf-fork');
    $pid = pcntl_fork();
    if ($pid === 0) {
        try {
            $g->nextId();
            $result = 'issued';
        } catch (Throwable $e) {
            $result = get_class($e) . ' ' . $e->statusCode;
        }
        try {
            (new Generator('twitter', ['datacenter' => 0, 'worker' => 12]))->nextId();
            $result .= '; new generator ok';
        } catch (Throwable $e) {
            $result .= '; new generator failed: ' . $e->getMessage();
        }
        file_put_contents($file, $result);
        posix_kill(getmypid(), SIGKILL); // no shutdown: the parent's test run must not be repeated
    }
    pcntl_waitpid($pid, $status);
    $result = (string) file_get_contents($file);
    unlink($file);
    assert_same('Snowflake\ForkedException ERR_SNOWFLAKE_FORKED; new generator ok', $result, 'child');
    assert_true($g->nextId() > $parentId, 'the parent goes on');
});

test('many layouts and generators created and freed; PHP memory stays flat', function () {
    $round = function (int $from) {
        for ($i = $from; $i < $from + 10000; $i++) {
            $g = new Generator('time:41,worker:10,sequence:12;epoch=0', ['worker' => $i % 1024], ['isolated' => true]);
            $g->nextIdAt(1000 + $i);
            $g->nextIds(10);
            $g->layout->decode(Snowflake\Id::decode(Snowflake\Id::encode($g->reserve(3)->first, 'base58'), 'base58'));
        }
    };
    $round(0);
    $before = memory_get_usage();
    $round(10000);
    assert_true(memory_get_usage() - $before < 64 * 1024, 'grew by ' . (memory_get_usage() - $before) . ' bytes');
});

test('layouts and generators cannot be cloned or unserialized into a second owner of their handle', function () {
    $g = new Generator('twitter', ['datacenter' => 0, 'worker' => 13]);
    assert_throws(Error::class, fn () => clone $g, 'clone a generator');
    assert_throws(Error::class, fn () => clone $g->layout, 'clone a layout');
    assert_throws(Exception::class, fn () => serialize($g), 'serialize');
    $ghost = unserialize('O:16:"Snowflake\\Layout":0:{}');
    unset($ghost); // its destructor must not touch a handle it never had
    assert_true($g->nextId() > 0, 'the original still works');
});

test('Layout::plan() is core\'s planner', function () {
    $twitter = new Layout('twitter');
    $p = $twitter->plan(1000, 50, 100000, 10);
    assert_same(1024, $p['node_values'], 'node values');
    assert_same([true, false], [$p['hosts_fit'], $p['processes_fit']], 'fit');
    assert_same(4096000, $p['capacity_per_second'], 'capacity');
    assert_same('lease per host', $p['advice'], 'advice');
    assert_throws(ValueException::class, fn () => $twitter->plan(-1, 1, 1, 1));
});

test('a generator per request: its layout is made once per spec, and generators of one identity share its state', function () {
    $spec = 'time:41,worker:10,sequence:12;epoch=1288834974657';
    assert_true(Layout::of($spec) === Layout::of($spec), 'Layout::of() gives the layout made for the spec before');
    $held = new Generator($spec, ['worker' => 777]);
    $ids = [$held->nextId()];
    for ($i = 0; $i < 200; $i++) {
        $g = new Generator($spec, ['worker' => 777]); // a generator per request, the identity held open
        assert_true($g->layout === $held->layout, 'the same layout object');
        $ids[] = $g->nextId();
        unset($g);
        $ids[] = $held->nextId(); // the one kept open goes on after the others are freed
    }
    $sorted = $ids;
    sort($sorted);
    assert_same($sorted, $ids, 'increasing across generators of one identity');
    assert_same(count($ids), count(array_unique($ids)), 'no ID twice');
    // A bad spec is refused each time (nothing of it is kept).
    foreach ([1, 2] as $_) {
        try {
            Layout::of('time:41,sequence:99');
            throw new RuntimeException('no exception');
        } catch (LayoutException) {
        }
    }
});
