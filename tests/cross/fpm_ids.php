<?php

// The PHP-FPM endpoint of tests/cross/run.sh: served by FPM workers that preloaded the
// package (opcache.preload + ffi.preload, the php.ini lines of docs/php.md), so there is no
// require here: the classes and the FFI scope must come from preloading.
//
// GET ?name=NAME&n=N&how=one|batch: a generator per request, as applications make them
// (twitter, datacenter=3, worker=7, ['shared' => NAME]); N IDs from N nextId() calls (one)
// or one nextIds(N) (batch). Answers one line:
//   IDS <worker pid> <Library::mode()> <id> <id> ...
// or `ERROR <class>: <message>`.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\Library;

header('Content-Type: text/plain');
try {
    $name = (string) ($_GET['name'] ?? '');
    $n = (int) ($_GET['n'] ?? 100);
    $gen = new Generator('twitter', ['datacenter' => 3, 'worker' => 7], ['shared' => $name]);
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
