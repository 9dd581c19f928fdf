<?php

// PHPUnit's bootstrap (phpunit.xml): the binding, the server helpers, and every
// `*_test.php`, whose `test()` calls register the tests that RegisteredTest runs.

declare(strict_types=1);

require __DIR__ . '/harness.php';
require dirname(__DIR__) . '/servers/servers.php';
require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

foreach (glob(__DIR__ . '/*_test.php') ?: [] as $file) {
    require $file;
}
