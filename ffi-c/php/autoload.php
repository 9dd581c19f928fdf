<?php

// A PSR-4 autoloader for `Snowflake\` when the package is used without Composer (the preload
// script, the tests, a plain `require`). Composer's autoloader does the same from composer.json.

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Snowflake\\')) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 10)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
