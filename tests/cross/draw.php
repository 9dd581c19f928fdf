<?php

// One process of the cross-language shared-state test (tests/cross/test_cross.py), in PHP (FFI).
// SNOWFLAKE_LIB points at the library.
//
//   php draw.php draw NAME COUNT OUT DIR   opens the shared generator NAME (twitter,
//                                          datacenter=3, worker=7), or a plain one (no
//                                          coordination option) when NAME is `-`, writes DIR/ready.<pid>,
//                                          waits for DIR/go, then draws COUNT IDs (runs of 1000
//                                          nextId() calls and nextIds(1000) batches,
//                                          alternating) and writes them to OUT, one a line
//   php draw.php mismatch NAME             opens NAME with another layout, node and policy;
//                                          prints `<case> <error code> <message>` a case, or
//                                          `<case> OPENED <first ID>`

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

use Snowflake\Generator;
use Snowflake\SharedMismatchException;

const LAYOUT = 'twitter';
const NODE = ['datacenter' => 3, 'worker' => 7];

function draw(string $name, int $count, string $out, string $dir): void
{
    $gen = new Generator(LAYOUT, NODE, $name === '-' ? [] : ['shared' => $name]);
    touch("$dir/ready.php." . getmypid());
    while (!file_exists("$dir/go")) {
        usleep(500);
        clearstatcache();
    }
    $ids = [];
    while (count($ids) < $count) {
        for ($i = min(1000, $count - count($ids)); $i > 0; $i--) {
            $ids[] = $gen->nextId();
        }
        array_push($ids, ...$gen->nextIds(min(1000, $count - count($ids))));
    }
    file_put_contents($out, implode("\n", $ids) . "\n");
}

function mismatch(string $name): void
{
    $cases = [
        'layout' => fn () => new Generator('discord', ['worker' => 3, 'process' => 7], ['shared' => $name]),
        'node' => fn () => new Generator(LAYOUT, ['datacenter' => 3, 'worker' => 8], ['shared' => $name]),
        'policy' => fn () => new Generator(LAYOUT, NODE, ['shared' => $name, 'max_drift_ms' => 5]),
    ];
    foreach ($cases as $case => $make) {
        try {
            echo "$case OPENED " . $make()->nextId() . "\n";
        } catch (SharedMismatchException $e) {
            echo "$case {$e->statusCode} " . str_replace("\n", ' ', $e->getMessage()) . "\n";
        } catch (Throwable $e) {
            echo "$case WRONG " . get_class($e) . ': ' . $e->getMessage() . "\n";
        }
    }
}

match ($argv[1] ?? '') {
    'draw' => draw($argv[2], (int) $argv[3], $argv[4], $argv[5]),
    'mismatch' => mismatch($argv[2]),
    default => fwrite(STDERR, "usage: php draw.php draw NAME COUNT OUT DIR | mismatch NAME\n") && exit(2),
};
