<?php

// The PHP tests' helpers: `test()` registers a test, which tests/php/RegisteredTest.php runs
// under PHPUnit (tests/php/phpunit.xml); the assert_*() functions count themselves for PHPUnit
// and throw AssertionFailed, which PHPUnit reports as a failure. Scripts outside PHPUnit
// (bench_adapters.php) use the same helpers.

declare(strict_types=1);

if (class_exists(PHPUnit\Framework\AssertionFailedError::class)) {
    final class AssertionFailed extends PHPUnit\Framework\AssertionFailedError
    {
    }
} else {
    final class AssertionFailed extends Exception
    {
    }
}

/** @var array<string, callable> */
$GLOBALS['__tests'] = [];

function test(string $name, callable $fn): void
{
    if (isset($GLOBALS['__tests'][$name])) {
        throw new LogicException("duplicate test name: $name");
    }
    $GLOBALS['__tests'][$name] = $fn;
}

function fail(string $message): never
{
    $GLOBALS['__assertions'] = ($GLOBALS['__assertions'] ?? 0) + 1;
    throw new AssertionFailed($message);
}

function show(mixed $v): string
{
    return var_export($v, true);
}

function assert_same(mixed $expected, mixed $actual, string $what = ''): void
{
    $GLOBALS['__assertions'] = ($GLOBALS['__assertions'] ?? 0) + 1;
    if ($expected !== $actual) {
        fail(($what !== '' ? "$what: " : '') . 'expected ' . show($expected) . ', got ' . show($actual));
    }
}

function assert_true(bool $cond, string $what): void
{
    $GLOBALS['__assertions'] = ($GLOBALS['__assertions'] ?? 0) + 1;
    if (!$cond) {
        fail($what);
    }
}

/**
 * Runs `$fn`, which must throw `$class`; returns the exception for further checks.
 *
 * @template T of Throwable
 * @param class-string<T> $class
 * @return T
 */
function assert_throws(string $class, callable $fn, string $what = ''): Throwable
{
    $GLOBALS['__assertions'] = ($GLOBALS['__assertions'] ?? 0) + 1;
    try {
        $fn();
    } catch (Throwable $e) {
        if ($e instanceof $class) {
            return $e;
        }
        fail(($what !== '' ? "$what: " : '') . "expected $class, got " . get_class($e) . ': ' . $e->getMessage());
    }
    fail(($what !== '' ? "$what: " : '') . "expected $class, nothing was thrown");
}

/** A shared test vector file, decoded. */
function vectors(string $name): array
{
    $file = dirname(__DIR__) . "/vectors/$name.json";
    return json_decode((string) file_get_contents($file), true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
}

/** The PHP form of a vector's decimal-string ID: an int up to PHP_INT_MAX, else the string. */
function php_id(string $decimal): int|string
{
    return strlen($decimal) < 19 || (strlen($decimal) === 19 && strcmp($decimal, (string) PHP_INT_MAX) <= 0)
        ? (int) $decimal
        : $decimal;
}

/**
 * Runs PHP with extra `-d` settings on `$script`; returns [exit status, stdout+stderr].
 * `$asNobody`: as user nobody when we are root.
 *
 * @param array<string, string> $ini
 * @param array<string, string> $env added to this process's environment
 */
function run_php(string $script, array $ini = [], array $env = [], array $args = [], bool $asNobody = false): array
{
    $cmd = [PHP_BINARY];
    if ($asNobody && posix_geteuid() === 0) {
        $cmd = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', PHP_BINARY];
    }
    foreach ($ini as $k => $v) {
        $cmd[] = '-d';
        $cmd[] = "$k=$v";
    }
    $cmd[] = $script;
    array_push($cmd, ...$args);
    $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, $env + getenv());
    $out = stream_get_contents($pipes[1]);
    fclose($pipes[1]);
    return [proc_close($proc), (string) $out];
}
