<?php

declare(strict_types=1);

namespace Snowflake;

use FFI;

/**
 * A Snowflake ID generator: lock-free, in the library. Every generator of a process with the
 * same layout and node values shares one state (unless `isolated`), so creating one per
 * request cannot repeat an ID.
 *
 * ```php
 * $gen = new Generator('twitter', ['datacenter' => 1, 'worker' => 3], ['max_wait_ms' => 0]);
 * $id = $gen->nextId();          // int (a decimal string above PHP_INT_MAX: 64-bit layouts)
 * $ids = $gen->nextIds(1000);    // list of 1000 increasing IDs, one call into the library
 * ```
 *
 * Options (DESIGN §3), as PHP values: `max_wait_ms` (int, default 1000; 0 never blocks),
 * `max_drift_ms` (int, default 0), `sequence_start` (`'zero'` or `'spread:K'`), `rollover`
 * (a node field name, or null), `isolated` (bool: a state of its own, for tests and replays).
 * Across processes (DESIGN §5): `shared` (a name: every process of the host opening it draws
 * from one state in shared memory), `state_file` (+ `state_window_ms`), `lease`
 * (`'local'` or `'redis://host:port/db'`, + `lease_dir`, `lease_field`, `lease_ttl_ms`).
 * Options that later versions of the library add pass through as they are.
 *
 * A generator must not cross `fork()` (pcntl_fork; a PHP-FPM master creating one before it
 * forks its workers): the child's copy fails with {@see ForkedException}. Create generators
 * in the process that uses them.
 */
final class Generator
{
    public readonly Layout $layout;

    private readonly FFI $ffi;
    private readonly FFI\CData $handle;
    private readonly FFI\CData $out;
    private readonly FFI\CData $outPtr;
    private readonly bool $wide;
    private ?FFI\CData $buf = null;
    private ?FFI\CData $block = null;
    private ?FFI\CData $blockPtr = null;
    private int $bufLen = 0;

    /** The PHP type of each option the library has now; others pass through as text. */
    private const OPTION_TYPES = [
        'max_wait_ms' => 'int',
        'max_drift_ms' => 'int',
        'sequence_start' => 'string',
        'rollover' => 'string',
        'isolated' => 'bool',
        'shared' => 'string',
        'state_file' => 'string',
        'state_window_ms' => 'int',
        'lease' => 'string',
        'lease_dir' => 'string',
        'lease_field' => 'string',
        'lease_ttl_ms' => 'int',
    ];

    /** Buffers above this many IDs are allocated per call instead of being kept. */
    private const KEEP_BUFFER = 65536;

    /**
     * @param Layout|string $layout a Layout, a spec or a preset name
     * @param array<string, int> $node node field values (fields left out are 0)
     * @param array<string, int|bool|string|null> $options
     * @throws LayoutException for an invalid spec
     * @throws ValueException for a node value outside its field, an unknown field or option
     * @throws \TypeError for a node value or option of the wrong type
     */
    public function __construct(Layout|string $layout, array $node = [], array $options = [])
    {
        $this->layout = Layout::of($layout);
        $ffi = $this->ffi = Library::ffi();
        $nodeText = $this->layout->nodeSpec($node);
        $optionsText = self::optionsSpec($options);
        $out = $ffi->new('SnowflakeGenerator *');
        $st = $ffi->snowflake_generator_new($this->layout->handle, $nodeText, $optionsText, FFI::addr($out));
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $this->handle = $out;
        // The out-parameter of every single-ID call, allocated once: no FFI::new per ID.
        $this->out = $ffi->new('uint64_t');
        $this->outPtr = FFI::addr($this->out);
        $this->wide = $this->layout->totalBits > 63;
    }

    public function __destruct()
    {
        if (isset($this->handle)) { // unset when made without the constructor (unserialize)
            $this->ffi->snowflake_generator_free($this->handle);
        }
    }

    /** Private: a copy would own the same C handle and free it twice. */
    private function __clone()
    {
    }

    /**
     * The next ID. Waits for the clock (at most `max_wait_ms`) when the tick is full or the
     * clock is behind, then fails.
     *
     * @throws ClockException (SequenceExhaustedException, ClockBehindException) with `retryAfterMs`
     * @throws ForkedException in the child of a fork()
     */
    public function nextId(): int|string
    {
        $st = $this->ffi->snowflake_next_id($this->handle, $this->outPtr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $id = $this->out->cdata;
        return $id >= 0 ? $id : sprintf('%u', $id);
    }

    /** The next ID without ever blocking: fails at once where nextId() would wait. */
    public function tryNextId(): int|string
    {
        $st = $this->ffi->snowflake_try_next_id($this->handle, $this->outPtr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $id = $this->out->cdata;
        return $id >= 0 ? $id : sprintf('%u', $id);
    }

    /**
     * The next ID at the caller's clock reading `$unixMs` (an int, or a decimal string):
     * deterministic, never waits. This is how the shared test vectors run.
     */
    public function nextIdAt(mixed $unixMs): int|string
    {
        $ms = is_int($unixMs) && $unixMs >= 0 ? $unixMs : Layout::u64Arg($unixMs, 'unix_ms');
        $st = $this->ffi->snowflake_next_id_at($this->handle, $ms, $this->outPtr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $id = $this->out->cdata;
        return $id >= 0 ? $id : sprintf('%u', $id);
    }

    /**
     * `$n` increasing IDs, from one call into the library (a block of IDs per tick). Waits
     * like nextId(), for each tick.
     *
     * @return list<int|string>
     */
    public function nextIds(mixed $n): array
    {
        if (!is_int($n)) {
            throw new \TypeError('nextIds() takes an int count, ' . get_debug_type($n) . ' given');
        }
        if ($n <= 0) {
            if ($n === 0) {
                return [];
            }
            throw ValueException::of("n = $n is negative");
        }
        if ($n <= $this->bufLen) {
            $buf = $this->buf;
        } else {
            $buf = $this->ffi->new("uint64_t[$n]");
            if ($n <= self::KEEP_BUFFER) {
                $this->buf = $buf;
                $this->bufLen = $n;
            }
        }
        $st = $this->ffi->snowflake_next_ids($this->handle, $buf, $n);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $ids = [];
        if ($this->wide) {
            for ($i = 0; $i < $n; $i++) {
                $id = $buf[$i];
                $ids[] = $id >= 0 ? $id : sprintf('%u', $id);
            }
        } else {
            for ($i = 0; $i < $n; $i++) {
                $ids[] = $buf[$i];
            }
        }
        return $ids;
    }

    /**
     * Up to `$n` IDs of one tick taken at once (at least one; fewer when the tick has less
     * room): `first`, `first + stride`, ... Waits like nextId().
     */
    public function reserve(mixed $n): Block
    {
        if (!is_int($n)) {
            throw new \TypeError('reserve() takes an int count, ' . get_debug_type($n) . ' given');
        }
        if ($n < 0) {
            throw ValueException::of("n = $n is negative");
        }
        $block = $this->block ??= $this->ffi->new('SnowflakeBlock');
        $this->blockPtr ??= FFI::addr($block);
        $st = $this->ffi->snowflake_reserve($this->handle, $n, $this->blockPtr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return new Block(Id::fromU64($block->first), $block->count, $block->stride);
    }

    /** What this generator has done, and how far ahead of the clock its state is. */
    public function stats(): Stats
    {
        $s = $this->ffi->new('SnowflakeStats');
        $st = $this->ffi->snowflake_generator_stats($this->handle, FFI::addr($s));
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return new Stats($s->issued, $s->waits, $s->waited_ms, $s->clock_behind, $s->rollovers, $s->drift_ms);
    }

    /**
     * Options in the C API's text form (`max_drift_ms=50;max_wait_ms=0`). Types are checked
     * here; names and ranges by the library, which knows every option.
     *
     * @internal
     * @param array<string, int|bool|string|null> $options
     */
    public static function optionsSpec(array $options): string
    {
        $parts = [];
        foreach ($options as $key => $value) {
            if (!is_string($key) || preg_match('/^[a-z][a-z0-9_]*$/D', $key) !== 1) {
                throw ValueException::of('option names are lowercase words like max_wait_ms, got ' . var_export($key, true));
            }
            $type = self::OPTION_TYPES[$key] ?? null;
            if ($value === null) {
                continue; // the default, e.g. 'rollover' => null
            }
            if ($type !== null && get_debug_type($value) !== $type) {
                throw new \TypeError("option `$key` must be $type, " . get_debug_type($value) . ' given');
            }
            if (is_bool($value)) {
                $text = $value ? 'true' : 'false';
            } elseif (is_int($value)) {
                if ($value < 0) {
                    throw ValueException::of("$key = $value is negative");
                }
                $text = (string) $value;
            } elseif (is_string($value)) {
                if (strpbrk($value, ";=\0") !== false) {
                    throw ValueException::of("`$key`: the value must not contain `;`, `=` or NUL");
                }
                $text = $value;
            } else {
                throw new \TypeError("option `$key` must be an int, a bool, a string or null, " . get_debug_type($value) . ' given');
            }
            $parts[] = "$key=$text";
        }
        return implode(';', $parts);
    }
}
