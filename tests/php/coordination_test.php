<?php

// Across processes (DESIGN §5), through the options the package passes to the library:
// a shared state for every process of a host (PHP-FPM workers), worker-id leases, state files,
// and the exception class of each of their failures.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\IoException;
use Snowflake\LeaseException;
use Snowflake\SharedMismatchException;
use Snowflake\StateFileException;

/** Runs `$fn($dir)` with a fresh directory as SNOWFLAKE_SHM_DIR, then removes it and puts
 * the run's back (every generator uses the host's state there, not only these tests'). */
function with_shm_dir(callable $fn): void
{
    $dir = sys_get_temp_dir() . '/sf-shm-' . getmypid() . '-' . bin2hex(random_bytes(4));
    mkdir($dir, 0700);
    $before = getenv('SNOWFLAKE_SHM_DIR');
    putenv("SNOWFLAKE_SHM_DIR=$dir");
    try {
        $fn($dir);
    } finally {
        putenv($before === false ? 'SNOWFLAKE_SHM_DIR' : "SNOWFLAKE_SHM_DIR=$before");
        exec('rm -rf ' . escapeshellarg($dir));
    }
}

test("shared: 4 processes with the same worker and ['shared' => name] never repeat an ID", function () {
    with_shm_dir(function (string $dir) {
        $children = [];
        for ($c = 0; $c < 4; $c++) {
            $pid = pcntl_fork();
            if ($pid === 0) {
                $out = '';
                try {
                    // A generator per "request", as PHP-FPM workers make them.
                    $ids = [];
                    for ($r = 0; $r < 50; $r++) {
                        $g = new Generator('twitter', ['datacenter' => 1, 'worker' => 7], ['shared' => 'php-test']);
                        for ($i = 0; $i < 200; $i++) {
                            $ids[] = $g->nextId();
                        }
                        array_push($ids, ...$g->nextIds(200));
                    }
                    $out = implode("\n", $ids);
                } catch (Throwable $e) {
                    $out = 'ERROR ' . get_class($e) . ': ' . $e->getMessage();
                }
                file_put_contents("$dir/ids-$c", $out);
                posix_kill(getmypid(), SIGKILL);
            }
            $children[] = $pid;
        }
        foreach ($children as $pid) {
            pcntl_waitpid($pid, $status);
        }
        $all = [];
        for ($c = 0; $c < 4; $c++) {
            $text = (string) @file_get_contents("$dir/ids-$c");
            str_starts_with($text, 'ERROR') && fail("child $c: $text");
            $ids = array_map('intval', explode("\n", $text));
            assert_same(20000, count($ids), "child $c issued");
            $sorted = $ids;
            sort($sorted);
            assert_true($sorted === $ids, "child $c: increasing");
            $all = array_merge($all, $ids);
        }
        assert_same(80000, count(array_unique($all)), 'distinct IDs over 4 processes');
        assert_same(1, count(glob("$dir/libsnowflake-*.shm")), 'the state lives in SNOWFLAKE_SHM_DIR');
    });
});

test('the host state: a name is a label; another policy while it is used is a SharedMismatchException', function () {
    with_shm_dir(function () {
        $node = ['datacenter' => 0, 'worker' => 1];
        $g = new Generator('twitter', $node, ['shared' => 'php-mismatch']);
        // Another layout or node values under the name are other states; another name, or
        // none, is the same state: no repeat.
        $others = [
            new Generator('discord', ['worker' => 1, 'process' => 0], ['shared' => 'php-mismatch']),
            new Generator('twitter', ['datacenter' => 0, 'worker' => 2], ['shared' => 'php-mismatch']),
            new Generator('twitter', $node, ['shared' => 'another-name']),
            new Generator('twitter', $node),
        ];
        $ids = [];
        $same = []; // this identity's: $g's, another name's and no name's
        for ($i = 0; $i < 2000; $i++) {
            $ids[] = $same[] = $g->nextId();
            foreach ($others as $k => $o) {
                $id = $o->nextId();
                $ids[] = $id;
                if ($k >= 2) {
                    $same[] = $id;
                }
            }
        }
        assert_same(count($ids), count(array_unique($ids)), 'no repeat');
        assert_same(6000, count($same), "this identity's IDs");
        $e = assert_throws(SharedMismatchException::class, fn () => new Generator('twitter', $node, ['max_drift_ms' => 5]), 'another policy');
        assert_same([12, 'ERR_SNOWFLAKE_SHARED_MISMATCH'], [$e->status, $e->statusCode], 'status');
        assert_true(str_contains($e->getMessage(), 'max_drift_ms=0, not 5'), $e->getMessage());
        $e = assert_throws(SharedMismatchException::class, fn () => new Generator('twitter', $node, ['process_only' => true]), 'process_only beside it');
        assert_true(str_contains($e->getMessage(), "host's shared state"), $e->getMessage());
        // Once nothing uses it, a new policy takes it over, above its IDs: those of this
        // identity only (the guarantee is per identity; in one millisecond worker 2's IDs are
        // larger by construction, and comparing with max($ids) failed under CI's load).
        $last = max($same);
        $g = null;
        $others = [];
        unset($o); // foreach's variable holds the last one
        assert_true((new Generator('twitter', $node, ['max_drift_ms' => 5]))->nextId() > $last, 'taken over above its IDs');
        assert_throws(Snowflake\ValueException::class, fn () => new Generator('twitter', $node, ['shared' => 'no/slash']), 'bad name');
    });
});

test("lease=local: each generator claims a free worker value; none left is a LeaseException", function () {
    with_shm_dir(function (string $dir) {
        $l = 'time:41,worker:1,sequence:12;epoch=0';
        $opts = ['lease' => 'local'];
        $a = new Generator($l, [], $opts);
        $b = new Generator($l, [], $opts);
        $workers = [$a->layout->decode($a->nextId())->fields['worker'], $b->layout->decode($b->nextId())->fields['worker']];
        sort($workers);
        assert_same([0, 1], $workers, 'two distinct values');
        $e = assert_throws(LeaseException::class, fn () => new Generator($l, [], $opts), 'a third');
        assert_same([13, 'ERR_SNOWFLAKE_LEASE'], [$e->status, $e->statusCode], 'status');
        unset($a); // frees the C generator, which releases its lease
        $c = new Generator($l, [], $opts);
        assert_true(is_int($c->nextId()), 'a released value is claimed again');
        $e = assert_throws(Snowflake\ValueException::class, fn () => new Generator($l, [], ['lease' => 'local', 'lease_dir' => '/tmp']));
        assert_true(str_contains($e->getMessage(), 'lease_dir was retired'), $e->getMessage());
    });
});

test('state_file: a path may hold =, ; and spaces', function () {
    with_shm_dir(function (string $dir) {
        mkdir("$dir/dir=with eq");
        $path = "$dir/dir=with eq/ids;one.state";
        (new Generator('twitter', ['datacenter' => 0, 'worker' => 3], ['state_file' => $path]))->nextId();
        assert_same(48, filesize($path), 'the state file at a path with `=`, `;` and a space');
    });
});

test('state_file: a corrupt file is a StateFileException', function () {
    with_shm_dir(function (string $dir) {
        file_put_contents("$dir/state", random_bytes(100));
        $e = assert_throws(StateFileException::class, fn () => (new Generator('twitter', ['datacenter' => 0, 'worker' => 1], ['state_file' => "$dir/state"]))->nextId());
        assert_same([14, 'ERR_SNOWFLAKE_STATE_FILE'], [$e->status, $e->statusCode], 'status');
        $g = new Generator('twitter', ['datacenter' => 0, 'worker' => 2], ['state_file' => "$dir/good", 'state_window_ms' => 500]);
        assert_true($g->nextId() < $g->nextId() && filesize("$dir/good") > 0, 'a fresh state file works');
    });
});

// --- Mixing kinds of generator for one identity (issue 13, step 2) -----------------------------
// Made safe (no repeat) or refused with a SharedMismatchException that names the other one.

const MIX_NODE = ['datacenter' => 3, 'worker' => 7];

/** Draws $n IDs from $a and $b in turn, one at a time; the repeats among the 2n. */
function interleaved_repeats(Generator $a, Generator $b, int $n): int
{
    $ids = [];
    for ($i = 0; $i < $n; $i++) {
        $ids[] = $a->nextId();
        $ids[] = $b->nextId();
    }
    return count($ids) - count(array_unique($ids));
}

test('mixing: a plain and a shared generator of one identity in one process never repeat', function () {
    with_shm_dir(function () {
        $plain = new Generator('twitter', MIX_NODE);
        $shared = new Generator('twitter', MIX_NODE, ['shared' => 'php-mix']);
        assert_same(0, interleaved_repeats($plain, $shared, 20000), 'repeats in 20,000 + 20,000');
    });
});

test('mixing: shared= under two names for one identity, in one process and in two, never repeats', function () {
    with_shm_dir(function (string $dir) {
        $a = new Generator('twitter', MIX_NODE, ['shared' => 'php-mix-one']);
        $b = new Generator('twitter', MIX_NODE, ['shared' => 'php-mix-two']);
        assert_same(0, interleaved_repeats($a, $b, 20000), 'repeats in one process');
        unset($a, $b);
        // Two processes, each with a generator of its own (made after the fork), drawing at once.
        $pid = pcntl_fork();
        if ($pid === 0) {
            try {
                $g = new Generator('twitter', MIX_NODE, ['shared' => 'php-mix-two']);
                $ids = [];
                for ($i = 0; $i < 100; $i++) {
                    array_push($ids, ...$g->nextIds(1000));
                }
                $out = implode("\n", $ids);
            } catch (Throwable $e) {
                $out = 'ERROR ' . get_class($e) . ': ' . $e->getMessage();
            }
            file_put_contents("$dir/child-ids", $out);
            posix_kill(getmypid(), SIGKILL);
        }
        $g = new Generator('twitter', MIX_NODE, ['shared' => 'php-mix-one']);
        $mine = [];
        for ($i = 0; $i < 100; $i++) {
            array_push($mine, ...$g->nextIds(1000));
        }
        pcntl_waitpid($pid, $status);
        $text = (string) @file_get_contents("$dir/child-ids");
        str_starts_with($text, 'ERROR') && fail("child: $text");
        $theirs = array_map('intval', explode("\n", $text));
        assert_same(100000, count($theirs), "the child's IDs");
        $all = array_merge($mine, $theirs);
        assert_same(0, count($all) - count(array_unique($all)), 'repeats between two processes');
    });
});

test('mixing: a local lease holding worker=v and a plain generator given worker=v is a SharedMismatchException naming the lease', function () {
    with_shm_dir(function (string $dir) {
        $leased = new Generator('twitter', ['datacenter' => 3], ['lease' => 'local']);
        $v = $leased->layout->decode($leased->nextId())->fields['worker'];
        $e = assert_throws(SharedMismatchException::class, fn () => new Generator('twitter', ['datacenter' => 3, 'worker' => $v]), 'plain beside the lease');
        assert_same([12, 'ERR_SNOWFLAKE_SHARED_MISMATCH'], [$e->status, $e->statusCode], 'status');
        assert_true(str_contains($e->getMessage(), 'lease'), 'names the lease: ' . $e->getMessage());
        assert_true(is_int($leased->nextId()), 'the lease still issues');
    });
});

test('mixing: a process_only and a plain generator of one identity is a SharedMismatchException naming the other', function () {
    with_shm_dir(function () {
        $own = new Generator('twitter', MIX_NODE, ['process_only' => true]);
        $e = assert_throws(SharedMismatchException::class, fn () => new Generator('twitter', MIX_NODE), 'plain beside process_only');
        assert_same('ERR_SNOWFLAKE_SHARED_MISMATCH', $e->statusCode, 'status');
        assert_true(str_contains($e->getMessage(), 'process_only'), 'names the process_only generator: ' . $e->getMessage());
        assert_true(is_int($own->nextId()), 'the process_only generator still issues');
        unset($own);
        $plain = new Generator('twitter', MIX_NODE);
        assert_throws(SharedMismatchException::class, fn () => new Generator('twitter', MIX_NODE, ['process_only' => true]), 'process_only beside plain');
        assert_true(is_int($plain->nextId()), 'the plain generator still issues');
    });
});
