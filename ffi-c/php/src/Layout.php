<?php

declare(strict_types=1);

namespace Snowflake;

use FFI;

/**
 * A layout: which bits of an ID hold the time, the sequence and each node field, its epoch
 * and its tick; decodes and composes IDs.
 *
 * ```php
 * $discord = new Layout('discord');
 * $parts = $discord->decode('175928847299117063');
 * // $parts->unixMs === 1462015105796, $parts->fields === ['worker' => 1, 'process' => 0]
 * echo $discord;   // time:42,worker:5,process:5,sequence:12;epoch=1420070400000;tick=1ms
 * ```
 *
 * The spec language is the one of every binding:
 * `time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms`, or a preset name
 * (`twitter`, `discord`, `instagram`, `sonyflake`, `baidu`, `mastodon`, `game`, `js53`).
 */
final class Layout implements \Stringable
{
    /** The canonical spec (integer epoch, `tick=` always written). */
    public readonly string $canonical;
    /** The epoch, in Unix milliseconds. */
    public readonly int|string $epochMs;
    /** The length of a tick, in milliseconds. */
    public readonly int|string $tickMs;
    /** The last instant the layout can represent, in Unix milliseconds. */
    public readonly int|string $lastUnixMs;
    /** The sum of the field widths: IDs are below 2^totalBits (int IDs when at most 63). */
    public readonly int $totalBits;
    /** How many IDs one node can issue in one tick: 2^sequence bits. */
    public readonly int $capacityPerTick;
    /** @var list<Field> the fields, from the most significant down */
    public readonly array $fields;

    /** @internal the `SnowflakeLayout *` */
    public readonly FFI\CData $handle;

    private readonly FFI $ffi;
    /** @var array<string, Field> */
    private readonly array $byName;
    /** @var array<int, string> index in the layout => name, for node fields */
    private readonly array $nodeIndexes;
    private readonly FFI\CData $parts;
    private readonly FFI\CData $partsPtr;
    /** A view of `$parts->fields`: indexing it skips a struct field lookup per value. */
    private readonly FFI\CData $partsFields;
    private readonly FFI\CData $u64;
    private readonly FFI\CData $u64Ptr;
    /** @var array<mixed>|null the node values nodeSpec() was last given, and their text */
    private ?array $lastNode = null;
    private string $lastNodeText = '';

    /**
     * @throws LayoutException when the spec is invalid (the message names the problem)
     */
    public function __construct(string $spec)
    {
        $ffi = $this->ffi = Library::ffi();
        $out = $ffi->new('SnowflakeLayout *');
        $st = $ffi->snowflake_layout_new(self::specText($spec), FFI::addr($out));
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $this->handle = $out;

        $this->u64 = $ffi->new('uint64_t');
        $this->u64Ptr = FFI::addr($this->u64);
        $this->parts = $ffi->new('SnowflakeParts');
        $this->partsPtr = FFI::addr($this->parts);
        $this->partsFields = $this->parts->fields;

        $epoch = $ffi->new('uint64_t');
        $tick = $ffi->new('uint64_t');
        $last = $ffi->new('uint64_t');
        $bits = $ffi->new('uint8_t');
        $this->check($ffi->snowflake_layout_info($out, FFI::addr($epoch), FFI::addr($tick), FFI::addr($last), FFI::addr($bits)));
        $this->epochMs = Id::fromU64($epoch->cdata);
        $this->tickMs = Id::fromU64($tick->cdata);
        $this->lastUnixMs = Id::fromU64($last->cdata);
        $this->totalBits = $bits->cdata;

        $field = $ffi->new('SnowflakeField');
        $fields = $byName = $nodeIndexes = [];
        $count = $ffi->snowflake_layout_field_count($out);
        for ($i = 0; $i < $count; $i++) {
            $this->check($ffi->snowflake_layout_field($out, $i, FFI::addr($field)));
            $f = new Field(Library::string($field->name), $field->bits, $field->shift, FieldKind::from($field->kind));
            $fields[] = $byName[$f->name] = $f;
            if ($f->kind === FieldKind::Node) {
                $nodeIndexes[$i] = $f->name;
            }
            if ($f->kind === FieldKind::Sequence) {
                $this->capacityPerTick = 1 << $f->bits;
            }
        }
        $this->fields = $fields;
        $this->byName = $byName;
        $this->nodeIndexes = $nodeIndexes;

        $text = $ffi->new('char[1024]');
        $this->check($ffi->snowflake_layout_to_string($out, $text, 1024));
        $this->canonical = FFI::string($text);
    }

    public function __destruct()
    {
        if (isset($this->handle)) { // unset when made without the constructor (unserialize)
            $this->ffi->snowflake_layout_free($this->handle);
        }
    }

    /** Private: a copy would own the same C handle and free it twice. */
    private function __clone()
    {
    }

    /**
     * Layouts `of()` made from a spec, by spec, for as long as the process (or, under
     * PHP-FPM, the request) lives: a layout never changes, and a generator made per call with
     * the same spec need not build it again (building one is a dozen FFI calls). Bounded: a
     * process that makes layouts of ever new specs starts the cache over.
     *
     * @var array<string, self>
     */
    private static array $made = [];

    /** The same layout, or the layout of a spec (made once per spec, see `$made`). */
    public static function of(self|string $layout): self
    {
        if ($layout instanceof self) {
            return $layout;
        }
        if (isset(self::$made[$layout])) {
            return self::$made[$layout];
        }
        $made = new self($layout);
        if (count(self::$made) >= 64) {
            self::$made = [];
        }
        return self::$made[$layout] = $made;
    }

    /** The canonical spec: parsing it gives this layout back. */
    public function __toString(): string
    {
        return $this->canonical;
    }

    /**
     * The layout's Lua script for Redis, for clients without a binding (the text of
     * `snowflake redis-script --layout SPEC`): load it with `SCRIPT LOAD` and call
     * `EVALSHA <sha1> 1 <state-key> <node values in layout order>`; it returns the ID as a
     * decimal string.
     */
    public function redisScript(): string
    {
        $needed = $this->ffi->new('size_t');
        $st = $this->ffi->snowflake_layout_redis_script($this->handle, null, 0, FFI::addr($needed));
        if ($st !== SnowflakeException::STATUS_BUFFER_TOO_SMALL) {
            $this->check($st);
        }
        $len = $needed->cdata;
        $buf = $this->ffi->new("char[$len]");
        $this->check($this->ffi->snowflake_layout_redis_script($this->handle, $buf, $len, null));
        return FFI::string($buf, $len - 1);
    }

    /**
     * Whether this layout fits a fleet — `$hosts` issuing IDs, `$processesPerHost` each,
     * `$peakPerSecond` IDs a second per host, for `$years` from now — and which way to
     * coordinate (`advice`: `shared`, `lease per process`, `lease per host`, `does not fit`).
     * Core's planner (`snowflake plan`), as an array of its figures.
     *
     * @return array{node_values: int, hosts_fit: bool, processes_fit: bool, capacity_per_second: int, host_capacity_per_second: int, peak_share: float, burst_per_tick: int, last_unix_ms: int, years_left: float, lasts: bool, advice: string}
     */
    public function plan(int $hosts, int $processesPerHost, int $peakPerSecond, int $years): array
    {
        foreach (['hosts' => $hosts, 'processesPerHost' => $processesPerHost, 'peakPerSecond' => $peakPerSecond, 'years' => $years] as $what => $n) {
            if ($n < 0) {
                throw ValueException::of("$what = $n is out of range: the smallest allowed is 0");
            }
        }
        $needed = $this->ffi->new('size_t');
        // One instant for the size query and the call: the text depends on it.
        $args = [$this->handle, $hosts, $processesPerHost, $peakPerSecond, $years, (int) (microtime(true) * 1000)];
        $st = $this->ffi->snowflake_layout_plan(...[...$args, null, 0, FFI::addr($needed)]);
        if ($st !== SnowflakeException::STATUS_BUFFER_TOO_SMALL) {
            $this->check($st);
        }
        $len = $needed->cdata;
        $buf = $this->ffi->new("char[$len]");
        $this->check($this->ffi->snowflake_layout_plan(...[...$args, $buf, $len, null]));
        return json_decode(FFI::string($buf, $len - 1), true, 2, JSON_THROW_ON_ERROR);
    }

    /**
     * The SQL that installs this layout's ID functions in a database (the text of
     * `snowflake sql --layout SPEC`): for `postgres` (12 or later) `PREFIX_next_id(<node values
     * in layout order>)`, `PREFIX_next_id_at(..., unix_ms)`, `PREFIX_min_id(timestamptz)`,
     * `PREFIX_max_id(timestamptz)` and `PREFIX_decode(bigint)`.
     *
     * @throws ValueException for a 64-bit layout (PostgreSQL's bigint is signed), an unknown
     *         dialect or a bad prefix
     */
    public function sql(string $dialect, string $prefix = 'snowflake'): string
    {
        $dialect = Id::cString($dialect, 'dialect');
        $prefix = Id::cString($prefix, 'prefix');
        $needed = $this->ffi->new('size_t');
        $st = $this->ffi->snowflake_layout_sql($this->handle, $dialect, $prefix, null, 0, FFI::addr($needed));
        if ($st !== SnowflakeException::STATUS_BUFFER_TOO_SMALL) {
            $this->check($st);
        }
        $len = $needed->cdata;
        $buf = $this->ffi->new("char[$len]");
        $this->check($this->ffi->snowflake_layout_sql($this->handle, $dialect, $prefix, $buf, $len, null));
        return FFI::string($buf, $len - 1);
    }

    /**
     * A stable 64-bit fingerprint of the layout (FNV-1a of the canonical text), as a decimal
     * string: always a string, because it is compared, not computed with.
     */
    public function fingerprint(): string
    {
        return sprintf('%u', $this->ffi->snowflake_layout_fingerprint($this->handle));
    }

    /** The field called `$name`, or null. */
    public function field(string $name): ?Field
    {
        return $this->byName[$name] ?? null;
    }

    /**
     * The parts of `$id` (an int >= 0 or a decimal string).
     *
     * @throws InvalidIdException when the ID has bits set above the layout's width
     */
    public function decode(mixed $id): Parts
    {
        $bits = is_int($id) && $id >= 0 ? $id : Id::toU64($id);
        $st = $this->ffi->snowflake_layout_decode($this->handle, $bits, $this->partsPtr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        $p = $this->parts;
        $values = $this->partsFields;
        $fields = [];
        foreach ($this->nodeIndexes as $i => $name) {
            $fields[$name] = $values[$i];
        }
        $unixMs = $p->unix_ms;
        return new Parts(
            $bits >= 0 ? $bits : sprintf('%u', $bits),
            $unixMs >= 0 ? $unixMs : sprintf('%u', $unixMs),
            $p->tick,
            $p->sequence,
            $fields,
        );
    }

    /**
     * The ID of the instant `$unixMs` (any instant of its tick), node field values and a
     * sequence number, each checked against its range.
     *
     * @param array<string, int>|string $fields node field values (`['datacenter' => 1, 'worker' => 3]`
     *        or the text `'datacenter=1,worker=3'`): every node field, or none for all zeros
     * @throws ValueException for a value outside its field, an unknown field
     * @throws TimeRangeException for an instant outside the layout's range
     */
    public function compose(mixed $unixMs, array|string $fields = [], mixed $sequence = 0): int|string
    {
        $node = $this->nodeSpec($fields);
        $seq = self::u64Arg($sequence, 'sequence');
        $this->check($this->ffi->snowflake_layout_compose($this->handle, self::timeArg($unixMs), $node, $seq, $this->u64Ptr));
        return Id::fromU64($this->u64->cdata);
    }

    /**
     * The smallest ID of the tick holding `$unixMs`: with {@see Layout::maxId()}, the bounds of
     * a `WHERE id BETWEEN` range query.
     */
    public function minId(mixed $unixMs): int|string
    {
        $this->check($this->ffi->snowflake_layout_min_id($this->handle, self::timeArg($unixMs), $this->u64Ptr));
        return Id::fromU64($this->u64->cdata);
    }

    /** The largest ID of the tick holding `$unixMs`. */
    public function maxId(mixed $unixMs): int|string
    {
        $this->check($this->ffi->snowflake_layout_max_id($this->handle, self::timeArg($unixMs), $this->u64Ptr));
        return Id::fromU64($this->u64->cdata);
    }

    /**
     * Node values in the C API's text form (`datacenter=1,worker=3`), checked as
     * {@see Layout::nodeText()} checks them, so that no value reaches C in a form it could misread.
     *
     * @internal
     * @param array<string, int> $node
     * @throws ValueException for an unknown field, a non-node field, a value outside its width
     * @throws TypeException for a value that is not an int
     */
    public function nodeSpec(array|string $node): string
    {
        if (is_string($node)) {
            // The text form C, Python, Node, the CLI and SNOWFLAKE_NODE take: the library reads it.
            return $node;
        }
        // The PHP types here (a key that is a name, a value that is an int), so that the text
        // cannot be misread; the names and ranges by core, whose messages every front end
        // shares ("did you mean `worker`?"). A generator made per request gives the same
        // values each time: the last ones' text is kept (`===`: the same keys, order, types
        // and values).
        if ($node === $this->lastNode) {
            return $this->lastNodeText;
        }
        $text = self::nodeText($node);
        $this->lastNode = $node;
        return $this->lastNodeText = $text;
    }

    /**
     * Node values as text (`datacenter=1,worker=3`) without a layout at hand (the layout
     * comes from the environment): the keys and the PHP types checked here, the names and
     * ranges by core.
     *
     * @internal
     * @param array<mixed> $node
     */
    public static function nodeText(array $node): string
    {
        // The names already checked in this process: a generator made per request checks the
        // same ones each time (a regular expression per name costs more than the rest).
        static $checked = [];
        $parts = [];
        foreach ($node as $name => $value) {
            if (!isset($checked[$name]) && (!is_string($name) || !preg_match('/^[a-z][a-z0-9_]{0,31}$/', $name))) {
                throw ValueException::of('node values are keyed by field name, got key ' . var_export($name, true));
            }
            if (!is_int($value)) {
                throw new TypeException("`$name` must be a whole number, not " . get_debug_type($value), SnowflakeException::STATUS_TYPE);
            }
            $checked[$name] = true;
            $parts[] = "$name=$value";
        }
        return implode(',', $parts);
    }

    /**
     * The UUIDv7 view of `$id` (36 lowercase characters): version 7, RFC 9562's variant, the
     * ID's Unix-ms time in its 48-bit timestamp (what PostgreSQL's `uuid_extract_timestamp`
     * and every UUIDv7 library read), the ID's other bits after it. Lossless
     * (`fromUuid(toUuid($id)) === $id`) and sorted as the IDs are.
     *
     * @throws InvalidIdException for an ID outside the layout
     * @throws TimeRangeException for an ID past 2^48 - 1 Unix ms (the year 10889)
     */
    public function toUuid(int|string $id): string
    {
        $buf = $this->ffi->new('char[37]');
        $st = $this->ffi->snowflake_layout_to_uuid($this->handle, self::u64Arg($id, 'id'), $buf, 37);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return FFI::string($buf);
    }

    /**
     * The ID whose UUIDv7 view is `$uuid` (its 36-character text, either case).
     *
     * @throws InvalidIdException for a UUID that no ID of this layout maps to
     */
    public function fromUuid(string $uuid): int|string
    {
        $st = $this->ffi->snowflake_layout_from_uuid($this->handle, Id::cString($uuid, 'uuid'), $this->u64Ptr);
        if ($st !== 0) {
            throw SnowflakeException::fromStatus($st);
        }
        return Id::fromU64($this->u64->cdata);
    }

    /**
     * An unsigned 64-bit argument: an int >= 0, or a decimal string (anything else is the
     * library's TYPE kind, naming `$what`).
     *
     * @internal
     */
    public static function u64Arg(mixed $value, string $what): int
    {
        if (is_int($value) && $value >= 0) {
            return $value;
        }
        if (is_int($value)) {
            throw ValueException::of("$what = $value is negative");
        }
        if (is_string($value) && ($value === '' || strspn($value, '0123456789') !== strlen($value))) {
            // A time or a count is no ID: not an InvalidIdException, but a value of the wrong form.
            throw new TypeException("`$what` must be an int or a decimal string, not '" . substr($value, 0, 40) . "'", SnowflakeException::STATUS_TYPE);
        }
        return Id::toU64($value, $what);
    }

    /**
     * A caller's time in Unix ms, by core's rule (`Value::instant`): an int, or a decimal
     * string; before 1970 is a TimeRangeException, as a time before the layout's epoch is.
     *
     * @internal
     */
    public static function timeArg(mixed $value): int
    {
        if (is_int($value) && $value < 0) {
            throw new TimeRangeException("time $value (Unix ms) is before 1970-01-01T00:00:00Z, before every layout's epoch", SnowflakeException::STATUS_TIME_RANGE);
        }
        return self::u64Arg($value, 'unix_ms');
    }

    private static function specText(string $spec): string
    {
        if (str_contains($spec, "\0")) {
            throw new LayoutException('invalid layout: the spec contains a NUL byte', SnowflakeException::STATUS_LAYOUT);
        }
        return $spec;
    }

    private function check(int $status): void
    {
        if ($status !== 0) {
            throw SnowflakeException::fromStatus($status);
        }
    }
}
