<?php

/*
 * The PHP binding's speed, in ns per call (per ID for batches).
 *
 *   SNOWFLAKE_LIB=target/release/libsnowflake.so php tests/php/bench.php [--quick]
 *
 * Targets (issue 3): nextId() <= 400 ns a call, nextIds(1000) <= 50 ns an ID; (issue 31) a
 * new Generator for an identity the process holds open, plus its first nextId(), <= 5 us.
 * The last row makes a record per call, in SNOWFLAKE_SHM_DIR or else a directory of its own.
 *
 * A layout caps how fast one node can issue: `twitter` has 4096 sequence numbers a
 * millisecond, so a loop that asks for more than 4096 IDs/ms (244 ns an ID) waits for the
 * clock, in any language; `mastodon` (65536 a ms) caps at 15 ns an ID. The batch figures
 * are therefore taken (a) on a layout with 21 sequence bits, which does not cap them, and
 * (b) on `twitter` one batch per millisecond, timing the call alone; the sustained twitter
 * figure shows the cap.
 *
 * Each figure is the median of 15 short rounds, with the best round beside it: on a shared
 * machine the spread is wide, and the best round is the closest to an idle machine.
 */

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

// The records the last row makes (one per fresh identity) go to a directory of this run's
// unless SNOWFLAKE_SHM_DIR names one: never the host's /dev/shm.
if ((string) getenv('SNOWFLAKE_SHM_DIR') === '') {
    $shm = sys_get_temp_dir() . '/snowflake-bench-' . getmypid();
    mkdir($shm, 0700);
    putenv("SNOWFLAKE_SHM_DIR=$shm");
    register_shutdown_function(function () use ($shm) {
        array_map('unlink', glob("$shm/*") ?: []);
        rmdir($shm);
    });
}

use Snowflake\Generator;
use Snowflake\Id;
use Snowflake\Layout;
use Snowflake\Library;

$quick = in_array('--quick', $argv, true);
$rounds = $quick ? 5 : 15;
$calls = $quick ? 20000 : 50000;

/**
 * Median and best ns per unit of `$round()`, which returns [elapsed ns, units].
 *
 * @return array{float, float}
 */
function measure(int $rounds, callable $round): array
{
    $round(); // warm up: allocations, caches, the first tick
    $per = [];
    for ($r = 0; $r < $rounds; $r++) {
        [$ns, $units] = $round();
        $per[] = $ns / $units;
    }
    sort($per);
    return [$per[intdiv($rounds, 2)], $per[0]];
}

/** @param array{float, float} $ns */
function report(string $what, array $ns, string $unit, ?float $target = null): void
{
    [$median, $best] = $ns;
    $verdict = $target === null ? '' : ($median <= $target ? "  (target <= $target: ok)" : "  (target <= $target: MISSED)");
    printf("%-54s %7.1f ns/%-4s (best %6.1f)%s\n", $what, $median, $unit, $best, $verdict);
}

printf(
    "libsnowflake %s through FFI (%s), PHP %s, opcache.enable_cli=%s, opcache.jit=%s\n",
    Library::version(),
    (new Layout('twitter')) ? Library::mode() : '',
    PHP_VERSION,
    ini_get('opcache.enable_cli') ?: '0',
    ini_get('opcache.jit') ?: 'off',
);

// The CPU, as core/benches/peers.rs prints it (issue 44 reports figures per machine).
$info = @file_get_contents('/proc/cpuinfo') ?: '';
$field = function (string $name) use ($info): ?string {
    return preg_match('/^' . preg_quote($name, '/') . '\s*:\s*(.*)$/m', $info, $m) ? trim($m[1]) : null;
};
printf("cpu: %s (family %s, model %s)\n", $field('model name') ?? 'unknown', $field('cpu family') ?? '?', $field('model') ?? '?');

$twitter = new Generator('twitter', ['datacenter' => 1, 'worker' => 1]);
$mastodon = new Generator('mastodon');
$roomy = new Generator('time:41,worker:1,sequence:21;epoch=1288834974657', ['worker' => 1]);

// The floor: one FFI call to the same function with the same preallocated out-parameter.
$ffi = Library::ffi();
$raw = new Generator('twitter', ['datacenter' => 1, 'worker' => 2]);
$handle = (fn () => $this->handle)->call($raw);
$out = $ffi->new('uint64_t');
$outPtr = FFI::addr($out);
report('raw $ffi->snowflake_next_id() (no wrapper)', measure($rounds, function () use ($ffi, $handle, $outPtr, $out, $calls) {
    $t = hrtime(true);
    for ($i = 0; $i < $calls; $i++) {
        $ffi->snowflake_next_id($handle, $outPtr);
        $id = $out->cdata;
    }
    return [hrtime(true) - $t, $calls];
}), 'call');

foreach (['twitter' => $twitter, 'mastodon' => $mastodon] as $name => $g) {
    report("nextId() [$name]", measure($rounds, function () use ($g, $calls) {
        $t = hrtime(true);
        for ($i = 0; $i < $calls; $i++) {
            $g->nextId();
        }
        return [hrtime(true) - $t, $calls];
    }), 'call', 400);
}

report('tryNextId() [mastodon]', measure($rounds, function () use ($mastodon, $calls) {
    $t = hrtime(true);
    for ($i = 0; $i < $calls; $i++) {
        $mastodon->tryNextId();
    }
    return [hrtime(true) - $t, $calls];
}), 'call');

$iso = new Generator('mastodon', [], ['isolated' => true, 'max_wait_ms' => 0]);
$ms = 1700000000000;
report('nextIdAt($ms) [mastodon, isolated]', measure($rounds, function () use ($iso, &$ms, $calls) {
    $ms += 1000;
    $t = hrtime(true);
    for ($i = 0; $i < $calls; $i++) {
        $iso->nextIdAt($ms + ($i >> 15));
    }
    return [hrtime(true) - $t, $calls];
}), 'call');

$batches = intdiv($calls, 100);
report('nextIds(1000) [21 sequence bits, sustained]', measure($rounds, function () use ($roomy, $batches) {
    $t = hrtime(true);
    for ($i = 0; $i < $batches; $i++) {
        $roomy->nextIds(1000);
    }
    return [hrtime(true) - $t, $batches * 1000];
}), 'ID', 50);

report('nextIds(1000) [twitter, one batch a millisecond]', measure($rounds, function () use ($twitter) {
    $ns = 0;
    for ($i = 0; $i < 50; $i++) {
        usleep(1000);
        $t = hrtime(true);
        $twitter->nextIds(1000);
        $ns += hrtime(true) - $t;
    }
    return [$ns, 50 * 1000];
}), 'ID', 50);

report('nextIds(1000) [twitter, sustained: 4096 IDs/ms cap]', measure($rounds, function () use ($twitter, $batches) {
    $t = hrtime(true);
    for ($i = 0; $i < $batches; $i++) {
        $twitter->nextIds(1000);
    }
    return [hrtime(true) - $t, $batches * 1000];
}), 'ID');

report('reserve(1000)->ids() [21 sequence bits]', measure($rounds, function () use ($roomy, $batches) {
    $t = hrtime(true);
    $n = 0;
    for ($i = 0; $i < $batches; $i++) {
        $n += count($roomy->reserve(1000)->ids());
    }
    return [hrtime(true) - $t, $n];
}), 'ID');

report('nextIds(100000) [21 sequence bits]', measure($rounds, function () use ($roomy) {
    $t = hrtime(true);
    $roomy->nextIds(100000);
    return [hrtime(true) - $t, 100000];
}), 'ID');

$layout = $twitter->layout;
$id = $twitter->nextId();
report('Layout::decode()', measure($rounds, function () use ($layout, $id, $calls) {
    $t = hrtime(true);
    for ($i = 0; $i < $calls; $i++) {
        $layout->decode($id);
    }
    return [hrtime(true) - $t, $calls];
}), 'call');

report("Id::encode(\$id, 'base62')", measure($rounds, function () use ($id, $calls) {
    $t = hrtime(true);
    for ($i = 0; $i < $calls; $i++) {
        Id::encode($id, 'base62');
    }
    return [hrtime(true) - $t, $calls];
}), 'call');

$text = Id::encode($id, 'base62');
report("Id::decode(\$text, 'base62')", measure($rounds, function () use ($text, $calls) {
    $t = hrtime(true);
    for ($i = 0; $i < $calls; $i++) {
        Id::decode($text, 'base62');
    }
    return [hrtime(true) - $t, $calls];
}), 'call');

// A generator per request (issue 44: <= 3 us; issue 31's was 5): a new Generator for an identity
// this process holds open (as a long-lived worker holds its first one), plus its first nextId().
$spec = 'time:41,worker:10,sequence:12;epoch=1288834974657';
$held = new Generator($spec, ['worker' => 1000]);
$held->nextId();
$requests = intdiv($calls, 10);
report('new Generator() + nextId() [identity held open]', measure($rounds, function () use ($spec, $requests) {
    $t = hrtime(true);
    for ($i = 0; $i < $requests; $i++) {
        (new Generator($spec, ['worker' => 1000]))->nextId();
    }
    return [hrtime(true) - $t, $requests];
}), 'gen', 3000);

// The same in CPU time (getrusage): on a machine shared with other work, the wall clock also
// counts the moments this process waited for a core.
report('  the same, CPU time of the process', measure($rounds, function () use ($spec, $requests) {
    $cpu = function (): float {
        $u = getrusage();
        return ($u['ru_utime.tv_sec'] + $u['ru_stime.tv_sec']) * 1e9 + ($u['ru_utime.tv_usec'] + $u['ru_stime.tv_usec']) * 1e3;
    };
    $t = $cpu();
    for ($i = 0; $i < $requests * 4; $i++) {
        (new Generator($spec, ['worker' => 1000]))->nextId();
    }
    return [$cpu() - $t, $requests * 4];
}), 'gen', 3000);

// The same identity with nothing else in the process holding it, as a PHP-FPM request that
// makes its generator and frees it at its end. Freeing it waited 50 ms each time before
// session 15's fix; opening the host's record and letting it go cost 89 us a request after it.
// Since session 16 the process keeps the record open once the last generator goes (see
// docs/processes.md), and checks at each new generator that its file is still at its name.
report('new Generator() + nextId() + free [nothing else holds it]', measure($rounds, function () use ($spec, $requests) {
    $t = hrtime(true);
    for ($i = 0; $i < $requests; $i++) {
        (new Generator($spec, ['worker' => 1001]))->nextId();
    }
    return [hrtime(true) - $t, $requests];
}), 'gen', 3000);

// An identity opened for the first time: the host's record is made (a file in
// SNOWFLAKE_SHM_DIR, else /dev/shm: run with a directory of its own).
$fresh = 0;
report('new Generator() + nextId() [a fresh identity]', measure(3, function () use ($spec, &$fresh) {
    $t = hrtime(true);
    for ($i = 0; $i < 100; $i++) {
        (new Generator($spec, ['worker' => $fresh++]))->nextId();
    }
    return [hrtime(true) - $t, 100];
}), 'gen');
