<?php

declare(strict_types=1);

namespace Snowflake;

use FFI;

/**
 * IDs as PHP values, and their string encodings.
 *
 * PHP ints are signed 64-bit, IDs unsigned: an ID (or any other unsigned 64-bit value of this
 * package) is an `int` when it is at most `PHP_INT_MAX` — always so for layouts of 63 bits or
 * fewer — and a decimal string above it (64-bit layouts such as `discord` and `mastodon`,
 * from 2^63 on). Never a negative int, never a float. Every method takes both forms.
 *
 * Encodings: `decimal`; fixed-width and sortable (text order is numeric order): `hex` (16),
 * `base32` (Crockford, 13), `base36` (13), `base58` (11), `base62` (11). `reverse` encodes
 * `2^64 - 1 - id` so that the newest ID sorts first.
 */
final class Id
{
    private static ?FFI\CData $u64 = null;
    private static ?FFI\CData $u64Ptr = null;
    private static ?FFI\CData $text = null;

    private function __construct()
    {
    }

    /**
     * `$id` (an int >= 0 or a decimal string) as text.
     *
     * ```php
     * Id::encode(175928847299117063, 'base62');   // "0Czks0tP37X"
     * ```
     *
     * @throws ValueException for an unknown encoding or a negative id
     */
    public static function encode(mixed $id, string $encoding = 'decimal', bool $reverse = false): string
    {
        $text = self::$text ??= Library::ffi()->new('char[32]');
        $st = Library::ffi()->snowflake_encode(self::toU64($id), self::cString($encoding, 'encoding'), $reverse, $text, 32);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return FFI::string($text);
    }

    /**
     * The ID that `$text` encodes; strict: wrong length, a character outside the alphabet or
     * a value above 2^64 - 1 are errors, never a wrap (Crockford base32 accepts lower case and
     * the I/L/O aliases).
     *
     * @throws InvalidIdException for malformed text
     * @throws ValueException for an unknown encoding
     */
    public static function decode(string $text, string $encoding = 'decimal', bool $reverse = false): int|string
    {
        if (str_contains($text, "\0")) {
            throw new InvalidIdException('the ID string contains a NUL byte', SnowflakeException::STATUS_INVALID_ID);
        }
        return self::fromU64(self::parse($text, self::cString($encoding, 'encoding'), $reverse));
    }

    /**
     * The PHP value of an unsigned 64-bit value that FFI read as a signed int.
     *
     * @internal
     */
    public static function fromU64(int $bits): int|string
    {
        return $bits >= 0 ? $bits : sprintf('%u', $bits);
    }

    /**
     * The signed int with the bits of unsigned `$id` (an int >= 0 or a decimal string), as
     * FFI passes it to a `uint64_t` parameter.
     *
     * @internal
     * @throws TypeException for anything but int and string
     * @throws ValueException for a negative int
     * @throws InvalidIdException for a string that is not a decimal number below 2^64
     */
    public static function toU64(mixed $id, string $what = 'id'): int
    {
        if (is_int($id)) {
            if ($id < 0) {
                throw ValueException::of("$what = $id is negative; values above PHP_INT_MAX are given as decimal strings");
            }
            return $id;
        }
        if (!is_string($id)) {
            throw new TypeException("$what must be an int or a decimal string, not " . get_debug_type($id), SnowflakeException::STATUS_TYPE);
        }
        // Up to 18 digits always fits in a PHP int; longer ones go to the library's strict parser.
        if (strlen($id) <= 18 && $id !== '' && strspn($id, '0123456789') === strlen($id)) {
            return (int) $id;
        }
        if (str_contains($id, "\0")) {
            throw new InvalidIdException("$what contains a NUL byte", SnowflakeException::STATUS_INVALID_ID);
        }
        return self::parse($id, 'decimal', false);
    }

    /**
     * `$value` for a `const char *` parameter: FFI would cut a PHP string at its first NUL.
     *
     * @internal
     */
    public static function cString(string $value, string $what): string
    {
        if (str_contains($value, "\0")) {
            throw ValueException::of("$what contains a NUL byte");
        }
        return $value;
    }

    private static function parse(string $text, string $encoding, bool $reverse): int
    {
        if (self::$u64 === null) {
            self::$u64 = Library::ffi()->new('uint64_t');
            self::$u64Ptr = FFI::addr(self::$u64);
        }
        $st = Library::ffi()->snowflake_decode_str($text, $encoding, $reverse, self::$u64Ptr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return self::$u64->cdata;
    }
}
