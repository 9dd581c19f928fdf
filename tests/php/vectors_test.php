<?php

// The shared vectors (tests/vectors/*.json), which every binding must reproduce bit for bit.

declare(strict_types=1);

use Snowflake\FieldKind;
use Snowflake\Generator;
use Snowflake\Id;
use Snowflake\Layout;
use Snowflake\SnowflakeException;

/** The exception of `$fn`, which must be a SnowflakeException with the vector's code. */
function assert_code(string $code, callable $fn, string $what): SnowflakeException
{
    $e = assert_throws(SnowflakeException::class, $fn, $what);
    assert_same($code, $e->statusCode, "$what: statusCode");
    return $e;
}

test('vectors: layouts (canonical, fingerprint, info, fields)', function () {
    foreach (vectors('layouts')['layouts'] as $v) {
        $l = new Layout($v['spec']);
        $what = $v['spec'];
        assert_same($v['canonical'], (string) $l, "$what canonical");
        assert_same($v['canonical'], (string) new Layout($v['canonical']), "$what reparsed");
        assert_same($v['fingerprint'], $l->fingerprint(), "$what fingerprint");
        assert_same($v['total_bits'], $l->totalBits, "$what total_bits");
        assert_same($v['capacity_per_tick'], $l->capacityPerTick, "$what capacity");
        assert_same($v['epoch_ms'], $l->epochMs, "$what epoch");
        assert_same($v['tick_ms'], $l->tickMs, "$what tick");
        assert_same($v['last_unix_ms'], $l->lastUnixMs, "$what last_unix_ms");
        $fields = array_map(fn ($f) => ['name' => $f->name, 'bits' => $f->bits, 'shift' => $f->shift], $l->fields);
        assert_same($v['fields'], $fields, "$what fields");
        assert_same(FieldKind::Time, $l->fields[0]->kind, "$what time first");
    }
});

test('vectors: decode, with 64-bit IDs as strings', function () {
    $n = 0;
    foreach (vectors('layouts')['layouts'] as $v) {
        $l = new Layout($v['spec']);
        foreach ($v['decode'] as $d) {
            $id = php_id($d['id']);
            foreach ([$id, $d['id']] as $input) { // as the PHP value, and always as a string
                $p = $l->decode($input);
                $what = "{$v['spec']} decode {$d['id']}";
                assert_same($id, $p->id, "$what id");
                assert_same($d['unix_ms'], $p->unixMs, "$what unix_ms");
                assert_same($d['tick'], $p->tick, "$what tick");
                assert_same($d['sequence'], $p->sequence, "$what sequence");
                assert_same($d['fields'], $p->fields, "$what fields");
                $n++;
            }
        }
    }
    assert_true($n > 20, 'decode vectors ran');
});

test('vectors: min_id / max_id bounds', function () {
    foreach (vectors('layouts')['layouts'] as $v) {
        $l = new Layout($v['spec']);
        foreach ($v['bounds'] as $b) {
            assert_same(php_id($b['min_id']), $l->minId($b['unix_ms']), "{$v['spec']} min_id({$b['unix_ms']})");
            assert_same(php_id($b['max_id']), $l->maxId($b['unix_ms']), "{$v['spec']} max_id({$b['unix_ms']})");
        }
    }
});

test('vectors: compose, and its errors', function () {
    foreach (vectors('layouts')['compose'] as $c) {
        $l = new Layout($c['spec']);
        $what = "compose {$c['spec']} " . json_encode($c);
        $fn = fn () => $l->compose($c['unix_ms'], $c['fields'], $c['sequence']);
        if (isset($c['error'])) {
            assert_code($c['error'], $fn, $what);
        } else {
            assert_same(php_id($c['id']), $fn(), $what);
        }
    }
});

test('vectors: invalid layouts', function () {
    foreach (vectors('layouts')['invalid'] as $c) {
        $e = assert_code($c['error'], fn () => new Layout($c['spec']), "spec " . json_encode($c['spec']));
        assert_true($e instanceof Snowflake\LayoutException, 'a LayoutException');
        if (isset($c['message_contains'])) {
            assert_true(
                str_contains(strtolower($e->getMessage()), strtolower($c['message_contains'])),
                "message of " . json_encode($c['spec']) . " ({$e->getMessage()}) contains {$c['message_contains']}",
            );
        }
    }
});

test('vectors: IDs that do not belong to the layout', function () {
    foreach (vectors('layouts')['decode_invalid'] as $c) {
        $l = new Layout($c['spec']);
        assert_code($c['error'], fn () => $l->decode(php_id($c['id'])), "decode {$c['id']} in {$c['spec']}");
    }
});

test('vectors: encodings, plain and reverse, both ways', function () {
    $n = 0;
    foreach (vectors('encodings')['ids'] as $v) {
        $id = php_id($v['id']);
        foreach (['plain' => false, 'reverse' => true] as $form => $reverse) {
            foreach ($v[$form] as $encoding => $text) {
                $what = "$encoding($form) of {$v['id']}";
                assert_same($text, Id::encode($id, $encoding, $reverse), "encode $what");
                assert_same($text, Id::encode($v['id'], $encoding, $reverse), "encode from string $what");
                assert_same($id, Id::decode($text, $encoding, $reverse), "decode $what");
                $n++;
            }
        }
    }
    assert_true($n >= 100, "$n encoding vectors");
});

test('vectors: encoding aliases and invalid strings', function () {
    $e = vectors('encodings');
    foreach ($e['aliases'] as $a) {
        assert_same(php_id($a['id']), Id::decode($a['text'], $a['encoding']), "alias {$a['text']}");
    }
    foreach ($e['invalid'] as $c) {
        assert_code($c['error'], fn () => Id::decode($c['text'], $c['encoding']), "{$c['encoding']} " . json_encode($c['text']));
    }
});

/** The vector's options as PHP values (options_fields), on an isolated generator. */
function trace_options(array $t): array
{
    return $t['options_fields'] + ['isolated' => true];
}

test('vectors: generator traces on isolated generators', function () {
    $steps = 0;
    foreach (vectors('generator')['traces'] as $t) {
        // Once with the options as PHP values, once through the text form the C tests use.
        foreach ([trace_options($t), null] as $options) {
            $g = $options === null
                ? new Generator($t['layout'], $t['node'], ['isolated' => true] + option_pairs($t['options']))
                : new Generator($t['layout'], $t['node'], $options);
            foreach ($t['steps'] as $i => $s) {
                $what = "{$t['name']}, step $i at {$s['unix_ms']}";
                if (isset($s['error'])) {
                    assert_code($s['error'], fn () => $g->nextIdAt($s['unix_ms']), $what);
                } else {
                    assert_same(php_id($s['id']), $g->nextIdAt($s['unix_ms']), $what);
                }
                $steps++;
            }
        }
    }
    assert_true($steps > 50, "$steps trace steps");
});

/** `max_drift_ms=0;max_wait_ms=0;rollover=clock` as PHP values, ints where they are digits. */
function option_pairs(string $text): array
{
    $options = [];
    foreach (explode(';', $text) as $pair) {
        [$k, $v] = explode('=', $pair, 2);
        $options[$k] = match (true) {
            ctype_digit($v) => (int) $v,
            $v === 'true' => true,
            $v === 'false' => false,
            default => $v,
        };
    }
    return $options;
}

test('vectors: redisScript() is core\'s Lua script for every preset', function () {
    $scripts = vectors('redis_scripts')['scripts'];
    assert_same(8, count($scripts), 'redis_scripts.json has the 8 presets');
    foreach ($scripts as $v) {
        $script = (new Layout($v['spec']))->redisScript();
        assert_same($v['script'], $script, "{$v['spec']} script");
        $args = implode(' ', array_map(fn ($n) => "<$n>", $v['node_fields']));
        assert_true(str_contains($script, "\n-- EVALSHA <sha1> 1 <state-key> $args\n"), "{$v['spec']} EVALSHA line");
    }
});
