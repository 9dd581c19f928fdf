<?php

// tests/serve's PHP-FPM endpoint: GET ?n=N issues N IDs of twitter, datacenter=2, worker=9 (the
// identity of tests/serve's services) from a plain generator, and answers
//   IDS <id> <id> ...
// or `ERROR <code>: <message>` when the library refuses (the arbiter may refuse a process of
// another user while the service issues with the identity).

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

use Snowflake\Generator;

header('Content-Type: text/plain');
try {
    $gen = new Generator('twitter', ['datacenter' => 2, 'worker' => 9]);
    echo 'IDS ', implode(' ', $gen->nextIds((int) ($_GET['n'] ?? 100))), "\n";
} catch (Throwable $e) {
    $code = $e instanceof Snowflake\SnowflakeException ? $e->statusCode : get_class($e);
    echo 'ERROR ', $code, ': ', str_replace("\n", ' ', $e->getMessage()), "\n";
}
