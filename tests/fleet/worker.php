<?php

// One holder of the cross-language fleet test (tests/fleet/test_fleet.py), in PHP (FFI; SNOWFLAKE_LIB
// points at the library): the same as worker.py (php worker.php URL OPTIONS DIR NAME).

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

use Snowflake\Generator;
use Snowflake\LeaseException;
use Snowflake\SnowflakeException;

const LAYOUT = 'time:41,worker:3,sequence:12;epoch=1288834974657';

[, $url, $options, $dir, $name] = $argv;
$extra = ['lease' => $url];
foreach (array_filter(explode(';', $options)) as $pair) {
    [$k, $v] = explode('=', $pair, 2);
    $extra[$k] = ctype_digit($v) ? (int) $v : $v;
}
try {
    $gen = new Generator(LAYOUT, [], $extra);
} catch (SnowflakeException $e) {
    echo 'OPENERR ', $e->statusCode, ' ', str_replace("\n", ' ', $e->getMessage()), "\n";
    exit(0);
}
$s = $gen->stats();
echo 'OPEN ', $s->leaseValue, ' ', $s->clockSkewMs ?? 'null', "\n";
$out = fopen("$dir/$name.ids", 'a');
while (!file_exists("$dir/stop")) {
    $batch = '';
    for ($i = 0; $i < 200; $i++) {
        try {
            $batch .= $gen->nextId() . "\n";
        } catch (LeaseException $e) {
            usleep(20000);
            break;
        }
    }
    fwrite($out, $batch);
    fflush($out);
    usleep(5000); // about 40,000 IDs a second: the test needs thousands, not millions
}
fclose($out);
$s = $gen->stats();
echo 'DONE ', $s->leaseClaims, ' ', $s->leaseLosses, "\n";
