<?php

declare(strict_types=1);

namespace Snowflake;

use FFI;

/**
 * Public IDs: IDs encrypted with Speck64/128 under a 128-bit key and written in a fixed-width
 * encoding (base62, 11 characters, by default), so that the IDs shown in URLs reveal neither
 * when a record was made nor how many were made in between; `decode()` gives the ID back.
 *
 * ```php
 * $public = new PublicIds(file_get_contents('/run/secrets/public-ids.key'));  // 16 bytes
 * $text = $public->encode($id);      // e.g. "2N80dHGURpY"
 * $id === $public->decode($text);
 * ```
 *
 * This is not authentication: any well-formed text decodes to some ID; look the ID up as for
 * any ID. The same key gives the same texts in C, C++, Python, Node, the CLI and here.
 */
final class PublicIds
{
    /** The texts' encoding: base62, base58, base36, base32 or hex. */
    public readonly string $encoding;

    private readonly FFI $ffi;
    private readonly FFI\CData $handle;
    private readonly FFI\CData $text;
    private readonly FFI\CData $u64;
    private readonly FFI\CData $u64Ptr;

    /**
     * @param string $key the 16 bytes of the key (binary, e.g. `random_bytes(16)`)
     * @throws ValueException for a key of another length (the message gives the length, never
     *         the bytes) or an encoding that is not fixed-width
     */
    public function __construct(string $key, string $encoding = 'base62')
    {
        $this->ffi = Library::ffi();
        $len = strlen($key);
        // The buffer has a fixed size, never the caller's length: FFI keeps only the low 32
        // bits of an array length, so a key of 2^32 + 1 bytes got a 1-byte buffer.
        if ($len !== 16) {
            throw ValueException::of("`key of $len bytes`: a public-ID key is exactly 16 bytes (128 bits)");
        }
        $bytes = $this->ffi->new('uint8_t[16]');
        FFI::memcpy($bytes, $key, 16);
        $out = $this->ffi->new('struct SnowflakePublicIds *');
        $st = $this->ffi->snowflake_public_new($bytes, 16, Id::cString($encoding, 'encoding'), FFI::addr($out));
        FFI::memset($bytes, 0, 16);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $this->handle = $out;
        $this->encoding = $encoding;
        $this->text = $this->ffi->new('char[32]');
        $this->u64 = $this->ffi->new('uint64_t');
        $this->u64Ptr = FFI::addr($this->u64);
    }

    public function __destruct()
    {
        $this->ffi->snowflake_public_free($this->handle);
    }

    /**
     * The public text of `$id` (an int, or a decimal string above PHP_INT_MAX).
     *
     * @throws ValueException for a negative id
     * @throws InvalidIdException for a string that is not a decimal number below 2^64
     */
    public function encode(int|string $id): string
    {
        $st = $this->ffi->snowflake_public_encode($this->handle, Id::toU64($id), $this->text, 32);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return FFI::string($this->text);
    }

    /**
     * The ID of a public text: an int, or a decimal string above PHP_INT_MAX.
     *
     * @throws InvalidIdException for a text of the wrong width or alphabet
     */
    public function decode(string $text): int|string
    {
        if (str_contains($text, "\0")) {
            throw new InvalidIdException('the public ID contains a NUL byte', SnowflakeException::STATUS_INVALID_ID);
        }
        $st = $this->ffi->snowflake_public_decode($this->handle, $text, $this->u64Ptr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return Id::fromU64($this->u64->cdata);
    }

    /** Never shows the key. */
    public function __debugInfo(): array
    {
        return ['encoding' => $this->encoding];
    }

    /** @throws \LogicException: a copy would share the handle (and the key) */
    public function __clone()
    {
        throw new \LogicException('PublicIds cannot be cloned');
    }

    /** @throws \LogicException: a serialized codec would carry its key */
    public function __serialize(): array
    {
        throw new \LogicException('PublicIds holds a secret key and cannot be serialized');
    }
}
