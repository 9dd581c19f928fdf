<?php

// Every `test('name', fn)` of tests/php/*_test.php as a PHPUnit test: one data set per
// registration, named by it, so that `--filter 'name'` selects tests as the names read. A
// failed assert_*() is a PHPUnit failure (AssertionFailed is an AssertionFailedError), any
// other exception an error.

declare(strict_types=1);

use PHPUnit\Framework\TestCase;

final class RegisteredTest extends TestCase
{
    /** @return array<string, array{string}> */
    public static function registered(): array
    {
        $sets = [];
        foreach (array_keys($GLOBALS['__tests']) as $name) {
            $sets[$name] = [$name];
        }
        return $sets;
    }

    /** @dataProvider registered */
    public function test(string $name): void
    {
        $GLOBALS['__assertions'] = 0;
        try {
            ($GLOBALS['__tests'][$name])();
        } finally {
            $this->addToAssertionCount($GLOBALS['__assertions']);
        }
    }
}
