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

/** Runs `$fn($dir)` with a fresh directory as SNOWFLAKE_SHM_DIR, then removes it. */
function with_shm_dir(callable $fn): void
{
    $dir = sys_get_temp_dir() . '/sf-shm-' . getmypid() . '-' . bin2hex(random_bytes(4));
    mkdir($dir, 0700);
    putenv("SNOWFLAKE_SHM_DIR=$dir");
    try {
        $fn($dir);
    } finally {
        putenv('SNOWFLAKE_SHM_DIR');
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
        assert_true(is_file("$dir/libsnowflake-php-test.shm"), 'the state lives in SNOWFLAKE_SHM_DIR');
    });
});

test('shared: another layout, node or policy under the same name is a SharedMismatchException', function () {
    with_shm_dir(function () {
        $g = new Generator('twitter', ['datacenter' => 0, 'worker' => 1], ['shared' => 'php-mismatch']);
        $g->nextId();
        foreach ([['discord', ['worker' => 1, 'process' => 0], []], ['twitter', ['datacenter' => 0, 'worker' => 2], []], ['twitter', ['datacenter' => 0, 'worker' => 1], ['max_drift_ms' => 5]]] as [$l, $n, $o]) {
            $e = assert_throws(SharedMismatchException::class, fn () => new Generator($l, $n, ['shared' => 'php-mismatch'] + $o), "$l " . json_encode($n + $o));
            assert_same([12, 'ERR_SNOWFLAKE_SHARED_MISMATCH'], [$e->status, $e->statusCode], 'status');
            assert_true(str_contains($e->getMessage(), 'php-mismatch.shm'), $e->getMessage());
        }
        assert_throws(Snowflake\ValueException::class, fn () => new Generator('twitter', [], ['shared' => 'no/slash']), 'bad name');
    });
});

test("lease=local: each generator claims a free worker value; none left is a LeaseException", function () {
    with_shm_dir(function (string $dir) {
        $l = 'time:41,worker:1,sequence:12;epoch=0';
        $opts = ['lease' => 'local', 'lease_dir' => "$dir/leases"];
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
        $e = assert_throws(IoException::class, fn () => new Generator($l, [], ['lease' => 'local', 'lease_dir' => '/proc/no-such-dir']));
        assert_same([15, 'ERR_SNOWFLAKE_IO'], [$e->status, $e->statusCode], 'an unusable lease directory');
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
