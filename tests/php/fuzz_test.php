<?php

declare(strict_types=1);

// Random input of every PHP type through every entry point: layout specs, node values,
// options, IDs, ID strings and encodings. Each gives a result that checks out, or a
// SnowflakeException / \TypeError (Snowflake\TypeException for a wrong value type) — never a
// crash, a hang, a warning or a silent wrap. Seeded (SNOWFLAKE_FUZZ_SEED): a failure names its
// seed and case, and reproduces.

use Snowflake\FieldKind;
use Snowflake\Generator;
use Snowflake\Id;
use Snowflake\Layout;
use Snowflake\SnowflakeException;

const FUZZ_CASES = 3000;

/** The result of $f, or null when it threw one of ours; anything else fails the test. */
function fuzz_attempt(string $what, callable $f): mixed
{
    try {
        return $f();
    } catch (SnowflakeException | \TypeError $e) {
        if ($e->getMessage() === '') {
            fail("$what: an error without a message: " . get_class($e));
        }
        return null;
    } catch (\Throwable $e) {
        fail("$what: threw " . get_class($e) . ': ' . $e->getMessage());
    }
}

test('random input through every entry point (seeded)', function () {
    $seed = (int) (getenv('SNOWFLAKE_FUZZ_SEED') ?: 20261123);
    mt_srand($seed);
    $pick = fn (array $xs) => $xs[mt_rand(0, count($xs) - 1)];
    $chars = preg_split('//u', "abcdefghijklmnopqrstuvwxyz0123456789:,;=-TZ._ !\u{e9}\0\u{1F600}", -1, PREG_SPLIT_NO_EMPTY);
    $text = function (int $max) use ($pick, $chars): string {
        $s = '';
        for ($i = mt_rand(0, $max); $i > 0; $i--) {
            $s .= $pick($chars);
        }
        return $s;
    };
    $spec = fn () => $pick([
        fn () => $pick(['twitter', 'discord', 'instagram', 'sonyflake', 'baidu', 'mastodon', 'game', 'nope']),
        fn () => sprintf(
            'time:%d,%s:%d,sequence:%d%s%s',
            mt_rand(0, 70),
            $pick(['worker', 'sequence', 'time', 'x']),
            mt_rand(0, 30),
            mt_rand(0, 30),
            // Sometimes no epoch: a custom spec must state one (issue 13).
            $pick(['', ';epoch=0', ';epoch=1288834974657', ';epoch=-1', ';epoch=today', ';epoch=2024-01-01T00:00:00Z']),
            $pick(['', ';tick=1ms', ';tick=0s', ';tick=10ms', ';tick=x']),
        ),
        fn () => $text(60),
    ])();
    $any = fn () => $pick([
        fn () => mt_rand(0, 1 << 20),
        fn () => -mt_rand(0, 100),
        fn () => PHP_INT_MAX,
        fn () => mt_rand() / 7.0,
        fn () => NAN,
        fn () => INF,
        fn () => (string) mt_rand(0, 1 << 30) . (string) mt_rand(0, 1 << 30),
        fn () => '18446744073709551616',
        fn () => '-1',
        fn () => (bool) mt_rand(0, 1),
        fn () => $text(12),
        fn () => null,
        fn () => [1, 2],
        fn () => new \stdClass(),
    ])();
    $encodings = ['decimal', 'hex', 'base32', 'base36', 'base58', 'base62'];
    $twitter = new Layout('twitter');
    $issued = $decoded = 0; // the cases that got past the errors: the fuzz reaches the core

    for ($i = 0; $i < FUZZ_CASES; $i++) {
        $what = "seed $seed, case $i";
        $s = $spec();
        $layout = fuzz_attempt("$what: new Layout(" . show($s) . ')', fn () => new Layout($s));
        if ($layout !== null) {
            assert_same((string) $layout, (string) new Layout((string) $layout), "$what: a layout reads back");
            assert_true(!str_contains($s, ':') || preg_match('/epoch\s*=/', $s) === 1, "$what: accepted without an epoch");
        }

        $enc = $pick([...$encodings, $text(6)]);
        // Half the strings are an encoding of a real ID, perhaps with one character changed.
        $str = $text(14);
        if (mt_rand(0, 1) === 1 && in_array($enc, $encodings, true)) {
            $str = Id::encode(Id::fromU64(mt_rand() << 32 | mt_rand()), $enc);
            if (mt_rand(0, 3) === 0) {
                $str = substr_replace($str, $pick($chars), mt_rand(0, strlen($str) - 1), 1);
            }
        }
        $id = fuzz_attempt("$what: Id::decode(" . show($str) . ", $enc)", fn () => Id::decode($str, $enc));
        if ($id !== null) {
            assert_true(is_int($id) || (is_string($id) && ctype_digit($id)), "$what: an ID is an int or a decimal string");
            assert_same($id, Id::decode(Id::encode($id, $enc), $enc), "$what: round trip");
            $decoded++;
        }
        $v = $any();
        fuzz_attempt("$what: Id::encode(" . show($v) . ')', fn () => Id::encode($v, $enc));
        $parts = fuzz_attempt("$what: decode(" . show($v) . ')', fn () => $twitter->decode($v));
        if ($parts !== null) {
            assert_true(!is_bool($v) && !is_float($v) && !is_null($v), "$what: decode accepted " . show($v));
        }

        // Half the node values and options are valid, so that generators get made too.
        $node = mt_rand(0, 1) === 1
            ? ['datacenter' => mt_rand(0, 40), 'worker' => mt_rand(0, 40)]
            : [$pick(['worker', 'datacenter', 'shard', 'time', $text(5)]) => $any()];
        $options = ['isolated' => true];
        if (mt_rand(0, 1) === 1) {
            $options[$pick(['max_drift_ms', 'max_wait_ms', 'sequence_start', 'rollover', 'maxWaitMs', 'shared', $text(8)])] = $any();
        }
        $g = fuzz_attempt("$what: new Generator", fn () => new Generator($pick(['twitter', 'game', $s]), $node, $options));
        if ($g !== null) {
            // A mapping names every node field but a rollover field, or none (issue 13).
            $named = array_filter($node, fn ($v) => $v !== null);
            foreach ($g->layout->fields as $f) {
                if ($f->kind === FieldKind::Node && $named !== [] && $f->name !== ($options['rollover'] ?? null)) {
                    assert_true(array_key_exists($f->name, $named), "$what: accepted without node value {$f->name}");
                }
            }
            $id = fuzz_attempt("$what: nextIdAt", fn () => $g->nextIdAt(1_800_000_000_000 + mt_rand(0, 999)));
            if ($id !== null) {
                $issued++;
                $fields = $g->layout->decode($id)->fields;
                foreach ($node as $name => $value) {
                    assert_same($value, $fields[$name] ?? null, "$what: the ID carries node value $name");
                }
            }
        }
    }
    assert_true($issued > 50 && $decoded > 50, "valid cases were reached: $issued IDs issued, $decoded strings decoded");
});
