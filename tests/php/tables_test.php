<?php

declare(strict_types=1);

// The PHP package against core's tables (tests/vectors/tables.json): each error kind is the
// class the table names, with its status constant and parent; each option of the table is
// accepted by name and type-checked by core; the Generator docblock lists them all.

use Snowflake\Generator;
use Snowflake\SnowflakeException;
use Snowflake\TypeException;
use Snowflake\ValueException;

test('error classes, statuses and parents are core\'s table', function () {
    foreach (vectors('tables')['errors'] as $row) {
        $class = 'Snowflake\\' . $row['php'];
        assert_true(class_exists($class), "$class exists");
        $parent = ltrim($row['php_parent'], '\\');
        $parent = str_contains($row['php_parent'], '\\') ? $parent : 'Snowflake\\' . $parent;
        assert_true(is_subclass_of($class, $parent), "$class extends $parent");
        assert_same($row['status'], constant(SnowflakeException::class . '::STATUS_' . $row['c_name']), $row['c_name']);
        $e = SnowflakeException::fromStatus($row['status']);
        assert_same($class, get_class($e), "fromStatus({$row['status']})");
        assert_same($row['code'], $e->statusCode, $row['kind']);
    }
});

test('every option of the table is accepted by name; core checks its type', function () {
    $source = file_get_contents(dirname(__DIR__, 2) . '/ffi-c/php/src/Generator.php');
    foreach (vectors('tables')['options'] as $o) {
        new Generator('twitter', ['datacenter' => 3, 'worker' => 3], ['isolated' => true, $o['name'] => null]);
        assert_true(str_contains($source, "`{$o['name']}`"), "the docblock names {$o['name']}");
        if ($o['type'] === 'integer') {
            $e = assert_throws(TypeException::class, fn () => new Generator('twitter', [], [$o['name'] => '5']));
            assert_true(str_contains($e->getMessage(), $o['name']), $e->getMessage());
            assert_throws(ValueException::class, fn () => new Generator('twitter', [], [$o['name'] => -1]));
        }
    }
});
