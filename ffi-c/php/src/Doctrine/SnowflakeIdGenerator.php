<?php

declare(strict_types=1);

namespace Snowflake\Doctrine;

use Doctrine\ORM\EntityManagerInterface;
use Doctrine\ORM\Id\AbstractIdGenerator;
use Snowflake\Generator;
use Snowflake\ProcessGenerator;

/**
 * A Doctrine ORM ID generator: each new entity's key is a Snowflake ID, known before the
 * INSERT (no sequence, no round trip).
 *
 * ```php
 * #[ORM\Id]
 * #[ORM\Column(type: SnowflakeType::NAME)]
 * #[ORM\GeneratedValue(strategy: 'CUSTOM')]
 * #[ORM\CustomIdGenerator(class: SnowflakeIdGenerator::class)]
 * private int $id;
 * ```
 *
 * Doctrine makes the generator with no arguments: it issues from the process's generator,
 * made from the environment (`SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`, `SNOWFLAKE_OPTIONS`), or
 * from the one given to {@see SnowflakeIdGenerator::useGenerator()}. Works with ORM 2.14+ and 3.
 */
class SnowflakeIdGenerator extends AbstractIdGenerator
{
    private static ?Generator $configured = null;

    /** Issues every entity's ID from `$generator` (null: the process's, from the environment). */
    public static function useGenerator(?Generator $generator): void
    {
        self::$configured = $generator;
    }

    public function generateId(EntityManagerInterface $em, $entity): mixed
    {
        return (self::$configured ?? ProcessGenerator::get())->nextId();
    }

    public function isPostInsertGenerator(): bool
    {
        return false;
    }
}
