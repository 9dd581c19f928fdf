<?php

/*
 * A shared generator's nextId() from PHP, in ns a call (issue 6: at most 500 ns).
 *
 *   SNOWFLAKE_LIB=target/release/libsnowflake.so SNOWFLAKE_SHM_DIR=/tmp/x php tests/cross/bench_shared.php
 *
 * Measured on `time:41,worker:1,sequence:22` (4M IDs a ms), where the layout's capacity is not
 * the limit, beside the same generator without `shared` (a state of this process only); and
 * on `twitter`, where a tight loop is capped at 4096 IDs a ms (244 ns an ID) in any language.
 * Each figure: the median of 300 rounds of 2,000 calls (about 0.6 ms each), with the best
 * round beside it: on a loaded machine most rounds include time the process spent preempted,
 * and short rounds let some run whole; the twitter figure takes 15 rounds of 50,000 calls,
 * long enough to show the cap. The last line, `shared_next_id_ns <median> <best>`, is read
 * by tests/cross/test_cross.py.
 */

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

use Snowflake\Generator;

/** @return array{float, float} median and best ns a call */
function measure(Generator $g, int $rounds, int $calls): array
{
    $per = [];
    for ($r = -1; $r < $rounds; $r++) { // round -1 warms up
        $t = hrtime(true);
        for ($i = 0; $i < $calls; $i++) {
            $g->nextId();
        }
        $ns = (hrtime(true) - $t) / $calls;
        if ($r >= 0) {
            $per[] = $ns;
        }
    }
    sort($per);
    return [$per[intdiv($rounds, 2)], $per[0]];
}

$wide = 'time:41,worker:1,sequence:22;epoch=0';
$name = 'bench-' . getmypid();
$cases = [
    'shared nextId(), time:41,worker:1,sequence:22' => [new Generator($wide, ['worker' => 1], ['shared' => $name]), 300, 2000],
    'process-local nextId(), same layout' => [new Generator($wide, ['worker' => 0]), 300, 2000],
    'shared nextId(), twitter (capped: 244 ns/ID)' => [new Generator('twitter', ['datacenter' => 0, 'worker' => 1], ['shared' => "$name-twitter"]), 15, 50000],
];
$shared = null;
foreach ($cases as $what => [$g, $rounds, $calls]) {
    [$median, $best] = measure($g, $rounds, $calls);
    printf("%-48s %6.1f ns a call (best %6.1f)\n", $what, $median, $best);
    $shared ??= [$median, $best];
}
$dir = getenv('SNOWFLAKE_SHM_DIR') ?: '/dev/shm';
foreach (["$name", "$name-twitter"] as $n) {
    @unlink("$dir/libsnowflake-$n.shm");
}
printf("shared_next_id_ns %.1f %.1f\n", ...$shared);
