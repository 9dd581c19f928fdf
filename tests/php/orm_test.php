<?php

// Issue 28 in PHP: `new Generator()` from the environment, stats()->sources, the UUIDv7 view,
// JsonId, and the framework adapters tested with the frameworks as Debian packages them
// (illuminate/database + illuminate/events, doctrine/orm + doctrine/dbal), on SQLite and on a
// real PostgreSQL started by tests/servers.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\InvalidIdException;
use Snowflake\JsonId;
use Snowflake\Layout;
use Snowflake\LayoutException;
use Snowflake\TimeRangeException;
use Snowflake\ValueException;

const ORM_ENV = ['SNOWFLAKE_LAYOUT', 'SNOWFLAKE_NODE', 'SNOWFLAKE_OPTIONS', 'SNOWFLAKE_REQUIRE_NODE'];

/** Runs `$fn` with the configuration variables set to `$vars` (the others unset). */
function with_snowflake_env(array $vars, callable $fn): mixed
{
    $saved = [];
    foreach (ORM_ENV as $k) {
        $saved[$k] = getenv($k);
        putenv($k);
    }
    foreach ($vars as $k => $v) {
        putenv("$k=$v");
    }
    try {
        return $fn();
    } finally {
        foreach ($saved as $k => $v) {
            putenv($v === false ? $k : "$k=$v");
        }
    }
}

test('new Generator() takes what the code leaves unset from the environment', function () {
    with_snowflake_env(
        ['SNOWFLAKE_LAYOUT' => 'discord', 'SNOWFLAKE_NODE' => 'worker=21,process=7', 'SNOWFLAKE_OPTIONS' => 'max_wait_ms=0;sequence_start=spread:4'],
        function () {
            $g = new Generator();
            assert_same((string) new Layout('discord'), (string) $g->layout, 'layout');
            assert_same(['worker' => 21, 'process' => 7], (new Layout('discord'))->decode($g->nextId())->fields, 'node values');
            $s = $g->stats()->sources;
            assert_same('SNOWFLAKE_LAYOUT', $s['layout'], 'layout source');
            assert_same('SNOWFLAKE_NODE', $s['node'], 'node source');
            assert_same('SNOWFLAKE_OPTIONS', $s['max_wait_ms'], 'max_wait_ms source');
            assert_same('default', $s['max_drift_ms'], 'max_drift_ms source');
            // The code's values win, key by key; the environment's node values are read
            // against the code's layout.
            putenv('SNOWFLAKE_NODE=datacenter=3,worker=4');
            $h = new Generator('twitter', null, ['max_wait_ms' => 5]);
            $t = $h->sources();
            assert_same(['code', 'SNOWFLAKE_NODE', 'code', 'SNOWFLAKE_OPTIONS'], [$t['layout'], $t['node'], $t['max_wait_ms'], $t['sequence_start']], 'sources');
            assert_same(['datacenter' => 3, 'worker' => 4], $h->layout->decode($h->nextId())->fields, 'node from the environment');
            // A node map with the layout from the environment: core checks it.
            putenv('SNOWFLAKE_LAYOUT=twitter');
            $i = new Generator(null, ['datacenter' => 1, 'worker' => 2]);
            assert_same('code', $i->sources()['node'], 'node source');
            assert_throws(ValueException::class, fn () => new Generator(null, ['shard' => 1]), 'unknown field');
        },
    );
    with_snowflake_env([], function () {
        $g = new Generator(null, null, ['isolated' => true]);
        assert_same((string) new Layout('twitter'), (string) $g->layout, 'default layout');
        assert_same(['isolated' => 'code'], array_filter($g->sources(), fn ($s) => $s !== 'default'), 'only the code');
    });
});

test('node values as text meet the environment (issues 28 and 29)', function () {
    with_snowflake_env(
        ['SNOWFLAKE_LAYOUT' => 'discord', 'SNOWFLAKE_NODE' => 'worker=9,process=2', 'SNOWFLAKE_OPTIONS' => 'max_wait_ms=0;sequence_start=spread:4'],
        function () {
            $discord = new Layout('discord');
            // The code's text node values win over SNOWFLAKE_NODE, with the code's layout...
            $g = new Generator('discord', 'worker=10,process=3');
            assert_same(['worker' => 10, 'process' => 3], $discord->decode($g->nextId())->fields, 'text node values');
            assert_same(['code', 'code', 'SNOWFLAKE_OPTIONS'], [$g->sources()['layout'], $g->sources()['node'], $g->sources()['sequence_start']], 'sources');
            // ... and with the environment's layout (core reads the text against it).
            $h = new Generator(null, 'worker=11,process=4', ['max_wait_ms' => 5]);
            assert_same(['worker' => 11, 'process' => 4], $discord->decode($h->nextId())->fields, 'against SNOWFLAKE_LAYOUT');
            assert_same(['SNOWFLAKE_LAYOUT', 'code', 'code'], [$h->sources()['layout'], $h->sources()['node'], $h->sources()['max_wait_ms']], 'sources');
            $e = assert_throws(ValueException::class, fn () => new Generator(null, 'datacenter=1,worker=2'), 'twitter text against discord');
            assert_true(str_contains($e->getMessage(), 'datacenter'), $e->getMessage());
            // Empty text, like an empty map, leaves the node values to SNOWFLAKE_NODE.
            $i = new Generator('discord', '');
            assert_same(['worker' => 9, 'process' => 2], $discord->decode($i->nextId())->fields, "'' from the environment");
            assert_same('SNOWFLAKE_NODE', $i->sources()['node'], 'node source');
        },
    );
});

// Issue 40: the environment's rules are core's, so each message is the same in every front end.
test('issue 40: the environment refuses what would go wrong silently, in the same words', function () {
    $cases = [
        [['SNOWFLAKE_NODE' => 'datacenter=1,worker=0', 'SNOWFLAKE_OPTIONS' => 'lease=local'],
            'environment variable SNOWFLAKE_NODE="datacenter=1,worker=0": `worker`: this field is set by the generator (the lease or the rollover): give it no node value'],
        [['SNOWFLAKE_OPTIONS' => 'lease=redis://app:pa;ss@cache:6379/0;max_wait_ms=0'],
            'environment variable SNOWFLAKE_OPTIONS="lease=redis://***;***;max_wait_ms=0": `lease`: the lease address holds a `;` (in its password?), which separates options: percent-encode it as %3B, or give the password with lease_password_file='],
        [['SNOWFLAKE_LAYOUT' => 'twitter;lease=redis://app:s3cret@cache/0'],
            'environment variable SNOWFLAKE_LAYOUT="twitter;lease=***": `lease`: is not part of a layout (a layout takes `epoch=` and `tick=`): options go in SNOWFLAKE_OPTIONS'],
        [['SNOWFLAKE_OPTIONS' => 'isolated=true'],
            "environment variable SNOWFLAKE_OPTIONS=\"isolated=true\": `isolated`: isolated takes a generator outside the host's record (for tests and replays with a clock of their own): give it in the code, never from the environment"],
        [['SNOWFLAKE_REQUIRE_NODE' => '1'],
            'environment variable SNOWFLAKE_REQUIRE_NODE="1": `SNOWFLAKE_NODE`: no node values are given, in the code or in SNOWFLAKE_NODE, and node 0 is refused: set SNOWFLAKE_NODE (`datacenter=1,worker=7`) or a lease'],
        [['SNOWFLAKE_NODE' => 'datacenter=1,wroker=7'],
            'environment variable SNOWFLAKE_NODE="datacenter=1,wroker=7": the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)'],
    ];
    foreach ($cases as [$vars, $message]) {
        with_snowflake_env($vars, function () use ($message) {
            $e = assert_throws(ValueException::class, fn () => new Generator(), $message);
            assert_same($message, $e->getMessage(), 'the message');
        });
    }
    // A map with the code's layout: core's message too.
    $e = assert_throws(ValueException::class, fn () => new Generator('twitter', ['datacenter' => 1, 'wroker' => 7]), 'wroker');
    assert_same('the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)', $e->getMessage(), 'the message');
    // A lease and the other node values, both from the environment.
    with_snowflake_env(['SNOWFLAKE_NODE' => 'datacenter=1', 'SNOWFLAKE_OPTIONS' => 'lease=local;max_wait_ms=0'], function () {
        $g = new Generator();
        assert_same(1, $g->layout->decode($g->nextId())->fields['datacenter'], 'datacenter beside a lease');
        assert_same('SNOWFLAKE_NODE', $g->sources()['node'], 'node source');
    });
    // Empty node values give none: SNOWFLAKE_NODE applies (core's rule, as in every front end).
    with_snowflake_env(['SNOWFLAKE_NODE' => 'datacenter=2,worker=9'], function () {
        foreach ([[], ''] as $empty) {
            $g = new Generator('twitter', $empty, ['max_wait_ms' => 0]);
            assert_same(['datacenter' => 2, 'worker' => 9], $g->layout->decode($g->nextId())->fields, 'empty node values');
        }
    });
});

test('a malformed variable throws, naming the variable and its value', function () {
    $cases = [
        [['SNOWFLAKE_LAYOUT' => 'twiter'], LayoutException::class, 'environment variable SNOWFLAKE_LAYOUT="twiter": invalid layout'],
        [['SNOWFLAKE_NODE' => 'datacenter=1'], ValueException::class, 'SNOWFLAKE_NODE="datacenter=1": the node values give no value for `worker`'],
        [['SNOWFLAKE_OPTIONS' => 'max_wait_ms=0,isolated=true'], ValueException::class, 'SNOWFLAKE_OPTIONS="max_wait_ms=0,isolated=true": `max_wait_ms`: options are separated by `;`, not `,`'],
        [['SNOWFLAKE_OPTIONS' => 'lease_dir=/tmp'], ValueException::class, 'SNOWFLAKE_OPTIONS="lease_dir=/tmp": `lease_dir`: lease_dir was retired'],
        [['SNOWFLAKE_OPTIONS' => 'lease=redis://app:s3cret@cache/0;lease_ttl_ms=1'], ValueException::class, 'redis://app:***@cache/0'],
    ];
    foreach ($cases as [$vars, $class, $message]) {
        with_snowflake_env($vars, function () use ($class, $message) {
            $e = assert_throws($class, fn () => new Generator(), $message);
            assert_true(str_contains($e->getMessage(), $message), $e->getMessage());
            assert_true(!str_contains($e->getMessage(), 's3cret'), 'no password');
        });
    }
});

test('the UUIDv7 view: the shared vectors, both ways, and the refusals', function () {
    $v = vectors('uuid');
    $n = 0;
    foreach ($v['layouts'] as $row) {
        $l = new Layout($row['spec']);
        $previous = '';
        foreach ($row['cases'] as $c) {
            $u = $l->toUuid($c['id']);
            assert_same($c['uuid'], $u, "{$row['spec']} {$c['id']}");
            assert_same(php_id($c['id']), $l->fromUuid(strtoupper($c['uuid'])), 'back');
            assert_true($u > $previous, 'sorted as the IDs');
            $previous = $u;
            $n++;
        }
    }
    assert_true($n > 50, "$n vectors");
    foreach ($v['to_uuid_invalid'] as $c) {
        $class = $c['error'] === 'ERR_SNOWFLAKE_TIME_RANGE' ? TimeRangeException::class : InvalidIdException::class;
        assert_throws($class, fn () => (new Layout($c['spec']))->toUuid($c['id']), $c['id']);
    }
    foreach ($v['from_uuid_invalid'] as $c) {
        $e = assert_throws(InvalidIdException::class, fn () => (new Layout($c['spec']))->fromUuid($c['uuid']), $c['uuid']);
        assert_true(str_contains($e->getMessage(), $c['message_contains']), $e->getMessage());
    }
});

test('JsonId writes a decimal string', function () {
    assert_same('{"id":"2125646515509792768"}', json_encode(['id' => new JsonId(2125646515509792768)]), 'int');
    assert_same('["18446744073709551615"]', json_encode([new JsonId('18446744073709551615')]), 'above PHP_INT_MAX');
    assert_same('7', (string) new JsonId(7), 'Stringable');
    assert_throws(ValueException::class, fn () => new JsonId(-1), 'negative');
    assert_throws(InvalidIdException::class, fn () => new JsonId('12a'), 'malformed');
});

/** Loads Debian's Eloquent (illuminate/database, illuminate/events) and the test's models. */
function load_eloquent(): void
{
    require_once '/usr/share/php/Illuminate/Database/autoload.php';
    require_once '/usr/share/php/Illuminate/Events/autoload.php';
    require_once __DIR__ . '/fixtures/orm/laravel_models.php';
}

/** An Eloquent connection (`$config`), booted with an event dispatcher as Laravel has one. */
function eloquent(array $config): \Illuminate\Database\Capsule\Manager
{
    load_eloquent();
    $capsule = new \Illuminate\Database\Capsule\Manager();
    $capsule->addConnection($config);
    $capsule->setEventDispatcher(new \Illuminate\Events\Dispatcher(new \Illuminate\Container\Container()));
    $capsule->setAsGlobal();
    $capsule->bootEloquent();
    // A new dispatcher for each database of this test: the models boot again on it (an
    // application has one dispatcher, and boots them once).
    \Illuminate\Database\Eloquent\Model::clearBootedModels();
    $schema = $capsule->schema();
    foreach (['orders', 'events', 'plain'] as $t) {
        $schema->dropIfExists($t);
    }
    $schema->create('orders', function ($t) {
        $t->bigInteger('id')->primary();
        $t->bigInteger('parent_id')->nullable();
        $t->string('item', 40);
    });
    $schema->create('events', function ($t) {
        $t->bigInteger('id')->primary();
        $t->bigInteger('ref');
    });
    $schema->create('plain', function ($t) {
        $t->bigIncrements('id');
        $t->string('item', 40);
    });
    return $capsule;
}

function eloquent_round(array $config): void
{
    with_snowflake_env(['SNOWFLAKE_NODE' => 'datacenter=6,worker=25'], function () use ($config) {
        eloquent($config);
        $twitter = new Layout('twitter');
        $start = (int) (microtime(true) * 1000);
        $orders = [];
        for ($i = 0; $i < 100; $i++) {
            $orders[] = \SnowflakeOrmTest\Order::create(['item' => "o$i"]);
        }
        $keys = array_map(fn ($o) => $o->id, $orders);
        foreach ($keys as $i => $k) {
            assert_true(is_int($k), 'an int key');
            assert_true($i === 0 || $k > $keys[$i - 1], 'increasing');
        }
        // The process's generator: SNOWFLAKE_NODE.
        assert_same(['datacenter' => 6, 'worker' => 25], $twitter->decode($keys[0])->fields, 'node values from the environment');
        $child = \SnowflakeOrmTest\Order::create(['item' => 'child', 'parent_id' => $keys[0]]);
        $found = \SnowflakeOrmTest\Order::find($child->id);
        assert_same('child', $found->item, 'found by key');
        assert_same($keys[0], $found->parent_id, 'cast column read back as int');
        assert_same(sprintf('{"id":"%d","parent_id":"%d","item":"child"}', $child->id, $keys[0]), $found->toJson(), 'toJson writes strings');
        $between = \SnowflakeOrmTest\Order::whereBetween('id', [$twitter->minId($start - 1), $twitter->maxId((int) (microtime(true) * 1000))])
            ->orderBy('id')->pluck('id')->all();
        assert_same([...$keys, $child->id], $between, 'range query by time');
        // A generator chosen in code, and a second column filled.
        \SnowflakeOrmTest\Event::$ids = new Generator('twitter', ['datacenter' => 1, 'worker' => 2]);
        $e = \SnowflakeOrmTest\Event::create([]);
        assert_same(['datacenter' => 1, 'worker' => 2], $twitter->decode($e->id)->fields, 'code generator');
        assert_true($e->ref > $e->id, 'ref filled after id');
        // A key given is kept; one past BIGINT is refused.
        $given = \SnowflakeOrmTest\Event::$ids->nextId();
        assert_same($given, \SnowflakeOrmTest\Order::create(['id' => $given, 'item' => 'given'])->id, 'given key');
        assert_throws(ValueException::class, fn () => \SnowflakeOrmTest\Order::create(['id' => '9223372036854775808', 'item' => 'x']), 'past BIGINT');
    });
}

test('Laravel Eloquent: HasSnowflakeIds and the SnowflakeId cast on SQLite', function () {
    eloquent_round(['driver' => 'sqlite', 'database' => ':memory:']);
});

/** The test's PostgreSQL (started once, stopped at the end of the run, its directory removed). */
function orm_postgres(): array
{
    static $servers = null;
    if ($servers === null) {
        $dir = sys_get_temp_dir() . '/snowflake-php-orm-' . getmypid();
        @mkdir($dir, 0700, true);
        $servers = TestServers::start('postgres', [], $dir);
        // stop() returns once serve.py has removed what it made in $dir, which is then empty.
        register_shutdown_function(function () use ($servers, $dir) {
            $servers->stop();
            rmdir($dir);
        });
    }
    return $servers->info['postgres'];
}

test('Laravel Eloquent: HasSnowflakeIds and the SnowflakeId cast on PostgreSQL', function () {
    $pg = orm_postgres();
    eloquent_round(['driver' => 'pgsql', 'host' => $pg['socket_dir'], 'port' => $pg['port'], 'database' => $pg['database'], 'username' => $pg['user'], 'password' => '']);
});

/** A Doctrine EntityManager over DBAL `$params`, with the test's entities and a fresh schema. */
function doctrine(array $params): \Doctrine\ORM\EntityManager
{
    require_once '/usr/share/php/Doctrine/ORM/autoload.php';
    require_once __DIR__ . '/fixtures/orm/DoctrineOrder.php';
    require_once __DIR__ . '/fixtures/orm/DoctrinePlain.php';
    if (!\Doctrine\DBAL\Types\Type::hasType(\Snowflake\Doctrine\SnowflakeType::NAME)) {
        \Doctrine\DBAL\Types\Type::addType(\Snowflake\Doctrine\SnowflakeType::NAME, \Snowflake\Doctrine\SnowflakeType::class);
    }
    $config = \Doctrine\ORM\ORMSetup::createAttributeMetadataConfiguration([__DIR__ . '/fixtures/orm'], true);
    $conn = \Doctrine\DBAL\DriverManager::getConnection($params, $config);
    $em = new \Doctrine\ORM\EntityManager($conn, $config);
    $tool = new \Doctrine\ORM\Tools\SchemaTool($em);
    $classes = [$em->getClassMetadata(\SnowflakeOrmTest\DoctrineOrder::class), $em->getClassMetadata(\SnowflakeOrmTest\DoctrinePlain::class)];
    $tool->dropSchema($classes);
    $tool->createSchema($classes);
    return $em;
}

function doctrine_round(array $params): void
{
    $em = doctrine($params);
    $twitter = new Layout('twitter');
    \Snowflake\Doctrine\SnowflakeIdGenerator::useGenerator(new Generator('twitter', ['datacenter' => 9, 'worker' => 10]));
    try {
        $orders = [];
        for ($i = 0; $i < 100; $i++) {
            $o = new \SnowflakeOrmTest\DoctrineOrder();
            $o->item = "o$i";
            $em->persist($o);
            // The key is known at persist(), before any INSERT.
            assert_true(is_int($o->id), 'key at persist');
            $orders[] = $o;
        }
        $em->flush();
        $keys = array_map(fn ($o) => $o->id, $orders);
        foreach ($keys as $i => $k) {
            assert_true($i === 0 || $k > $keys[$i - 1], 'increasing');
        }
        assert_same(['datacenter' => 9, 'worker' => 10], $twitter->decode($keys[0])->fields, 'the configured generator');
        $child = new \SnowflakeOrmTest\DoctrineOrder();
        $child->item = 'child';
        $child->parentId = $keys[0];
        $em->persist($child);
        $em->flush();
        $em->clear();
        $found = $em->find(\SnowflakeOrmTest\DoctrineOrder::class, $child->id);
        assert_same('child', $found->item, 'found');
        assert_same($keys[0], $found->parentId, 'the type reads an int back');
        $ids = $em->createQuery('SELECT o.id FROM SnowflakeOrmTest\DoctrineOrder o ORDER BY o.id')->getSingleColumnResult();
        assert_same([...$keys, $child->id], array_map(fn ($v) => (int) $v, $ids), 'ordered');
        $type = \Doctrine\DBAL\Types\Type::getType(\Snowflake\Doctrine\SnowflakeType::NAME);
        $platform = $em->getConnection()->getDatabasePlatform();
        assert_same('BIGINT', strtoupper($type->getSQLDeclaration([], $platform)), 'BIGINT column');
        assert_throws(ValueException::class, fn () => $type->convertToDatabaseValue('9223372036854775808', $platform), 'past BIGINT');
        // Without a configured generator: the process's, from the environment.
        \Snowflake\Doctrine\SnowflakeIdGenerator::useGenerator(null);
        with_snowflake_env(['SNOWFLAKE_NODE' => 'datacenter=11,worker=12'], function () use ($em, $twitter) {
            $gen = new \Snowflake\Doctrine\SnowflakeIdGenerator();
            // The process generator may exist already (made by an earlier test): its node
            // values are those it was made with; a fresh process reads the environment.
            $id = $gen->generateId($em, null);
            assert_true(is_int($id) && $id > 0, 'an ID');
        });
    } finally {
        \Snowflake\Doctrine\SnowflakeIdGenerator::useGenerator(null);
        $em->close();
    }
}

test('Doctrine ORM: SnowflakeIdGenerator and SnowflakeType on SQLite', function () {
    doctrine_round(['driver' => 'pdo_sqlite', 'memory' => true]);
});

test('Doctrine ORM: SnowflakeIdGenerator and SnowflakeType on PostgreSQL', function () {
    $pg = orm_postgres();
    doctrine_round(['driver' => 'pdo_pgsql', 'host' => $pg['socket_dir'], 'port' => $pg['port'], 'dbname' => $pg['database'], 'user' => $pg['user']]);
});

test('docs/integrations-php.md: every example runs', function () {
    $md = (string) file_get_contents(dirname(__DIR__, 2) . '/docs/integrations-php.md');
    preg_match_all('/^```php\n(.*?)^```/ms', $md, $m);
    assert_true(count($m[1]) >= 5, 'the page has its examples');
    $vendor = "require __DIR__ . '/vendor/autoload.php';";
    // Composer's autoloader of a project with the package and the frameworks: here the
    // package's own and Debian's.
    $autoload = 'require ' . var_export(realpath(dirname(__DIR__, 2) . '/ffi-c/php/autoload.php'), true) . '; '
        . "require_once '/usr/share/php/Illuminate/Database/autoload.php'; "
        . "require_once '/usr/share/php/Illuminate/Events/autoload.php'; "
        . "require_once '/usr/share/php/Doctrine/ORM/autoload.php';";
    // The page's Debian lines are the ones these examples run with.
    foreach (array_slice(explode('; ', $autoload), 1) as $line) {
        assert_true(str_contains($md, "\n" . rtrim($line, ';') . ";\n"), "docs/integrations-php.md gives Debian's `$line`");
    }
    foreach ($m[1] as $i => $code) {
        str_contains($code, $vendor) || fail("example $i does not start with $vendor");
        $dir = sys_get_temp_dir() . '/sf-doc-' . getmypid() . "-$i";
        @mkdir($dir, 0700);
        $file = "$dir/example.php";
        file_put_contents($file, str_replace($vendor, $autoload, $code));
        try {
            [$status, $out] = with_snowflake_env([], fn () => run_php($file));
        } finally {
            unlink($file);
            rmdir($dir);
        }
        assert_same(0, $status, "example $i: $out");
        assert_true(trim($out) !== '' && !str_contains($out, 'bool(false)'), "example $i printed: $out");
    }
});
