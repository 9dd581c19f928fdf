<?php

// Run by tests/dist/run.sh against the Composer package from dist/php/, installed into a fresh
// project: the installed Snowflake\ package decodes the shared vectors, gives their public IDs and
// PostgreSQL SQL, and issues IDs.
//
//   CLI:      php check.php <project dir> <tests/vectors> <version>    (Composer's autoloader)
//   PHP-FPM:  GET ?vectors=<tests/vectors>&version=<version>           (preloaded: no require)
//
// Prints one line: `ok <SAPI> <Library::mode()> <version> <n> vectors, <m> IDs, library <path>`,
// or `FAIL <message>`.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\Id;
use Snowflake\Layout;
use Snowflake\Library;
use Snowflake\PublicIds;
use Snowflake\SnowflakeException;
use Snowflake\ValueException;

function dist_expect(bool $ok, string $what): void
{
    if (!$ok) {
        throw new RuntimeException($what);
    }
}

function dist_check(string $vectors, string $version): string
{
    $read = fn (string $name): array => json_decode((string) file_get_contents("$vectors/$name.json"), true, 512, JSON_THROW_ON_ERROR);
    dist_expect(Library::version() === $version, 'version ' . Library::version() . ", expected $version");
    $checked = 0;

    foreach ($read('layouts')['layouts'] as $v) {
        $layout = new Layout($v['spec']);
        dist_expect((string) $layout === $v['canonical'], "{$v['spec']}: canonical " . $layout);
        foreach ($v['decode'] as $d) {
            $p = $layout->decode($d['id']);
            dist_expect(
                [$p->unixMs, $p->tick, $p->sequence, $p->fields] === [$d['unix_ms'], $d['tick'], $d['sequence'], $d['fields']],
                "{$v['spec']}: decode {$d['id']}",
            );
            $checked++;
        }
    }

    foreach ($read('encodings')['ids'] as $v) {
        foreach (['plain' => false, 'reverse' => true] as $form => $reverse) {
            foreach ($v[$form] as $encoding => $text) {
                dist_expect(Id::encode($v['id'], $encoding, $reverse) === $text, "encode $encoding($form) {$v['id']}");
                dist_expect((string) Id::decode($text, $encoding, $reverse) === $v['id'], "decode $encoding($form) $text");
                $checked++;
            }
        }
    }

    foreach ($read('generator')['traces'] as $t) {
        $g = new Generator($t['layout'], $t['node'], $t['options_fields'] + ['isolated' => true]);
        foreach ($t['steps'] as $s) {
            try {
                $got = (string) $g->nextIdAt($s['unix_ms']);
            } catch (SnowflakeException $e) {
                $got = $e->statusCode;
            }
            dist_expect($got === ($s['id'] ?? $s['error']), "{$t['name']} at {$s['unix_ms']}: $got");
            $checked++;
        }
    }

    // Public IDs (issue 14): the same texts as every language, and back.
    foreach ($read('public_ids')['keys'] as $row) {
        $ids = new PublicIds((string) hex2bin($row['key_hex']), $row['encoding']);
        foreach ($row['cases'] as $c) {
            dist_expect($ids->encode($c['id']) === $c['text'], "public encode {$row['key_hex']} {$c['id']}");
            dist_expect((string) $ids->decode($c['text']) === $c['id'], "public decode {$row['key_hex']} {$c['text']}");
            $checked++;
        }
    }

    // The PostgreSQL SQL (issue 14): core's text for every preset, or the refusal of a 64-bit one.
    foreach ($read('sql_scripts')['scripts'] as $v) {
        $layout = new Layout($v['spec']);
        if (isset($v['error'])) {
            try {
                $layout->sql($v['dialect']);
                dist_expect(false, "{$v['spec']}: a 64-bit layout's SQL was not refused");
            } catch (ValueException $e) {
                dist_expect($e->statusCode === $v['error'], "{$v['spec']}: {$e->statusCode}");
            }
        } else {
            dist_expect($layout->sql($v['dialect'], $v['prefix']) === $v['sql'], "{$v['spec']}: the SQL differs from core's");
        }
        $checked++;
    }

    // The UUIDv7 view and JsonId (issue 28); the framework adapters ship in the package (their
    // frameworks are suggested packages: only the files are checked here).
    foreach ($read('uuid')['layouts'] as $row) {
        $l = new Layout($row['spec']);
        foreach ($row['cases'] as $c) {
            dist_expect($l->toUuid($c['id']) === $c['uuid'] && (string) $l->fromUuid($c['uuid']) === $c['id'], "UUID of {$c['id']}");
            $checked++;
        }
    }
    dist_expect(json_encode([new \Snowflake\JsonId(7)]) === '["7"]', 'JsonId');
    $src = dirname((new \ReflectionClass(Generator::class))->getFileName());
    foreach (['Laravel/HasSnowflakeIds.php', 'Laravel/SnowflakeId.php', 'Doctrine/SnowflakeIdGenerator.php', 'Doctrine/SnowflakeType.php'] as $f) {
        dist_expect(is_file("$src/$f"), "the package lacks src/$f");
    }

    // New IDs from the system clock: unique, increasing, of this node.
    $g = new Generator('twitter', ['datacenter' => 1, 'worker' => 3]);
    $ids = [];
    for ($i = 0; $i < 1000; $i++) {
        $ids[] = $g->nextId();
    }
    array_push($ids, ...$g->nextIds(9000));
    $twitter = new Layout('twitter');
    foreach ($ids as $i => $id) {
        dist_expect($i === 0 || $id > $ids[$i - 1], "ID $i does not increase");
        dist_expect($twitter->decode($id)->fields === ['datacenter' => 1, 'worker' => 3], "ID $i's node");
    }

    // The first hour (issue 29): node values as text, Parts::dateTime() with the milliseconds.
    $text = new Generator('twitter', 'datacenter=1,worker=3');
    $id = $text->nextId();
    dist_expect($id > end($ids), 'node values as text: the same identity, one state');
    $date = (new Layout('discord'))->decode('175928847299117063')->dateTime();
    dist_expect($date->format(DATE_RFC3339_EXTENDED) === '2016-04-30T11:18:25.796+00:00', 'Parts::dateTime()');
    $lib = Library::mode() === 'cdef' ? Library::loadedPath() : '(preloaded)';
    return sprintf('ok %s %s %s %d vectors, %d IDs, library %s', PHP_SAPI, Library::mode(), $version, $checked, count($ids), $lib);
}

try {
    if (PHP_SAPI === 'cli') {
        require $argv[1] . '/vendor/autoload.php';
        echo dist_check($argv[2], $argv[3]), "\n";
    } else {
        header('Content-Type: text/plain');
        echo dist_check((string) $_GET['vectors'], (string) $_GET['version']), "\n";
    }
} catch (Throwable $e) {
    echo 'FAIL ', get_class($e), ': ', $e->getMessage(), "\n";
    if (PHP_SAPI === 'cli') {
        exit(1);
    }
}
