<?php

// Issue 14: PublicIds against the shared vectors (a pure-Python Speck64/128 model wrote them),
// and Layout::sql() against core's text.

declare(strict_types=1);

use Snowflake\InvalidIdException;
use Snowflake\Layout;
use Snowflake\PublicIds;
use Snowflake\ValueException;

function public_ids_of(array $v): PublicIds
{
    return new PublicIds(hex2bin($v['key_hex']), $v['encoding'] ?? 'base62');
}

test('public IDs: the Speck paper vector and every key of public_ids.json', function () {
    $v = vectors('public_ids');
    assert_same('Speck64/128', $v['cipher'], 'cipher');
    $ka = $v['known_answer'];
    assert_same($ka['text'], public_ids_of($ka)->encode(php_id($ka['id'])), 'paper vector');
    $n = 0;
    foreach ($v['keys'] as $row) {
        $p = public_ids_of($row);
        assert_same($row['encoding'], $p->encoding, 'encoding');
        foreach ($row['cases'] as $c) {
            $id = php_id($c['id']);
            assert_same($c['text'], $p->encode($id), "encode {$c['id']}");
            assert_same($c['text'], $p->encode($c['id']), "encode '{$c['id']}' as a string");
            assert_same($id, $p->decode($c['text']), "decode {$c['text']}");
            $n++;
        }
    }
    assert_true($n >= 50, "$n vectors");
});

test('public IDs: bad keys, encodings and texts are typed errors', function () {
    $v = vectors('public_ids');
    foreach (array_merge($v['invalid_keys'], $v['invalid_encodings']) as $bad) {
        $e = assert_throws(ValueException::class, fn () => public_ids_of($bad), json_encode($bad));
        assert_same($bad['error'], $e->statusCode, 'code');
    }
    $e = assert_throws(ValueException::class, fn () => new PublicIds('SECRET-but-17-byt'));
    assert_true(str_contains($e->getMessage(), 'key of 17 bytes') && !str_contains($e->getMessage(), 'SECRET'), $e->getMessage());
    foreach ($v['invalid_texts'] as $bad) {
        $e = assert_throws(InvalidIdException::class, fn () => public_ids_of($bad)->decode($bad['text']), $bad['text']);
        assert_same($bad['error'], $e->statusCode, 'code');
    }
    $p = new PublicIds(str_repeat('k', 16));
    assert_throws(InvalidIdException::class, fn () => $p->decode("0Czks0tP37\0"), 'NUL');
    assert_throws(ValueException::class, fn () => $p->encode(-1), 'negative');
    assert_throws(\LogicException::class, fn () => serialize($p), 'serialize');
    assert_true(!str_contains(print_r($p, true), 'kkkk'), 'the key never shows');
});

test('public IDs: consecutive IDs give unordered texts that decode back', function () {
    $p = new PublicIds(random_bytes(16));
    $texts = [];
    for ($id = 1724551110456389632; $id < 1724551110456389632 + 200; $id++) {
        $t = $p->encode($id);
        assert_same($id, $p->decode($t), "round trip $id");
        $texts[] = $t;
    }
    $sorted = $texts;
    sort($sorted, SORT_STRING);
    assert_true($sorted !== $texts, 'texts of consecutive IDs are not in order');
    assert_same(200, count(array_unique($texts)), 'no two IDs share a text');
    $other = new PublicIds(random_bytes(16));
    assert_true($other->encode(1724551110456389632) !== $texts[0], 'another key, another text');
});

test('sql(): core\'s text for every preset, 64-bit layouts refused', function () {
    $scripts = vectors('sql_scripts')['scripts'];
    assert_same(8, count($scripts), 'sql_scripts.json has the 8 presets');
    foreach ($scripts as $v) {
        $l = new Layout($v['spec']);
        if (isset($v['error'])) {
            $e = assert_throws(ValueException::class, fn () => $l->sql('postgres'), $v['spec']);
            assert_same($v['error'], $e->statusCode, 'code');
        } else {
            assert_same($v['sql'], $l->sql('postgres'), "{$v['spec']} SQL");
            assert_same($v['sql'], $l->sql($v['dialect'], $v['prefix']), "{$v['spec']} SQL, prefix given");
        }
    }
    assert_throws(ValueException::class, fn () => (new Layout('twitter'))->sql('mysql'), 'dialect');
    assert_throws(ValueException::class, fn () => (new Layout('twitter'))->sql('postgres', 'Bad Prefix'), 'prefix');
    assert_throws(ValueException::class, fn () => (new Layout('twitter'))->sql("postgres\0"), 'NUL');
});
