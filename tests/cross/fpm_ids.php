<?php

// The PHP-FPM endpoint of tests/cross/test_cross.py: served by FPM workers that preloaded the
// package (opcache.preload + ffi.preload, the php.ini lines of docs/php.md), so there is no
// require here: the classes and the FFI scope must come from preloading.
//
// GET ?name=NAME&n=N&how=one|batch: a generator per request, as applications make them
// (twitter, datacenter=3, worker=7, ['shared' => NAME], or no option at all when NAME is `-`);
// N IDs from N nextId() calls (one)
// or one nextIds(N) (batch). Answers one line:
//   IDS <worker pid> <Library::mode()> <id> <id> ...
// or `ERROR <class>: <message>`. how=bench times N nextId() calls instead, from
// ['shared' => NAME] on time:41,worker:1,sequence:22 (twitter would cap the loop at 4096 IDs
// a ms), and answers
//   BENCH <worker pid> <Library::mode()> <median ns a call> <best ns a call>

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\Library;

header('Content-Type: text/plain');
try {
    $name = (string) ($_GET['name'] ?? '');
    $n = (int) ($_GET['n'] ?? 100);
    if (($_GET['how'] ?? 'one') === 'bench') {
        // ns a nextId() call in this worker: rounds of 2,000 calls (short, so that some run
        // without being preempted on a loaded machine), N calls in all, on a layout whose
        // capacity (4M IDs a ms) does not cap the loop.
        $gen = new Generator('time:41,worker:1,sequence:22;epoch=0', ['worker' => 1], ['shared' => $name]);
        $per = [];
        $calls = 2000;
        $rounds = intdiv($n, $calls);
        for ($r = 0; $r < $rounds; $r++) {
            $t = hrtime(true);
            for ($i = 0; $i < $calls; $i++) {
                $gen->nextId();
            }
            $per[] = (hrtime(true) - $t) / $calls;
        }
        sort($per);
        printf("BENCH %d %s %.1f %.1f\n", getmypid(), Library::mode(), $per[intdiv($rounds, 2)], $per[0]);
        return;
    }
    $gen = new Generator('twitter', ['datacenter' => 3, 'worker' => 7], $name === '-' ? [] : ['shared' => $name]);
    if (($_GET['how'] ?? 'one') === 'batch') {
        $ids = $gen->nextIds($n);
    } else {
        $ids = [];
        for ($i = 0; $i < $n; $i++) {
            $ids[] = $gen->nextId();
        }
    }
    echo 'IDS ', getmypid(), ' ', Library::mode(), ' ', implode(' ', $ids), "\n";
} catch (Throwable $e) {
    echo 'ERROR ', get_class($e), ': ', str_replace("\n", ' ', $e->getMessage()), "\n";
}
