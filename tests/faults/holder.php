<?php

// One holder of the fault-injection suite (tests/faults/run.py), in PHP through FFI
// (SNOWFLAKE_LIB points at the library): the same as holder.py (php holder.php URL OPTIONS DIR NAME).

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

use Snowflake\Generator;
use Snowflake\SnowflakeException;

const LAYOUT = 'time:41,worker:2,sequence:12;epoch=1288834974657';

[, $url, $options, $dir, $name] = $argv;
$extra = [];
foreach (array_filter(explode(';', $options)) as $pair) {
    [$k, $v] = explode('=', $pair, 2);
    $extra[$k] = preg_match('/^-?\d+$/', $v) ? (int) $v : $v;
}
$stops = ["$dir/stop", "$dir/$name.stop"];
$last = null;
$refused = function (SnowflakeException $e) use (&$last): void {
    $text = str_replace("\n", ' ', $e->getMessage());
    $key = $e->statusCode . ' ' . substr($text, 0, 48);
    if ($key !== $last) {
        $last = $key;
        echo 'REFUSED ', $e->statusCode, ' ', $text, "\n";
    }
};
// The address a generator was opened with (`@FILE`: read again when the file changes, and the
// generator opened anew on the new address, as a fleet's configuration would do).
$address = fn (): string => str_starts_with($url, '@') ? trim((string) file_get_contents(substr($url, 1))) : $url;
$openedWith = null;
$gen = null;
$claims = 0; // the claims seen: each new one (a lapsed lease healed) is printed
$out = fopen("$dir/$name.ids", 'a');
while (!file_exists($stops[0]) && !file_exists($stops[1])) {
    if ($gen !== null && $address() !== $openedWith) {
        $gen = null;
    }
    if ($gen === null) {
        try {
            $openedWith = $address();
            $gen = new Generator(LAYOUT, [], ['lease' => $openedWith] + $extra);
            $last = null;
            $s = $gen->stats();
            $claims = $s->leaseClaims;
            echo 'OPEN ', $s->leaseValue, "\n";
        } catch (SnowflakeException $e) {
            $refused($e);
            usleep(100000);
            continue;
        }
    }
    $batch = '';
    for ($i = 0; $i < 20; $i++) {
        try {
            $batch .= $gen->nextId() . "\n";
        } catch (SnowflakeException $e) {
            $refused($e);
            usleep(20000);
            break;
        }
    }
    if ($batch !== '') {
        $last = null; // issuing again: the next refusal is news
    }
    fwrite($out, $batch);
    fflush($out);
    $now = $gen->stats();
    if ($now->leaseClaims !== $claims && $now->leaseValue !== null) {
        $claims = $now->leaseClaims;
        echo 'OPEN ', $now->leaseValue, "\n";
    }
    usleep(10000);
}
fclose($out);
$s = $gen?->stats();
echo 'DONE ', $s?->leaseClaims ?? 0, ' ', $s?->leaseLosses ?? 0, "\n";
