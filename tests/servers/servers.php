<?php

// The PHP client of tests/servers/serve.py (see tests/servers/README.md).
//
//   require __DIR__ . '/../servers/servers.php';
//   $fpm = TestServers::start('fpm', ['--workers', '2', '--ini', $ini], $dir);
//   $fpm->info['fpm']['socket'];      // serve.py's JSON description
//   $fpm->command('restart');          // $fpm->info is updated
//   $fpm->stop();                      // servers stopped, files removed (also on destruction)
//
// serve.py reads our end of a pipe: if this process dies in any way, the pipe closes and the
// servers are stopped.

declare(strict_types=1);

final class TestServers
{
    public const SERVE = __DIR__ . '/serve.py';

    /** @var array<string, mixed> serve.py's description, updated by every command */
    public array $info = [];

    /** @var resource|null */
    private $proc;

    /** @var array<int, resource> */
    private array $pipes = [];

    /** @param list<string> $args serve.py's options */
    public static function start(string $kind, array $args = [], ?string $dir = null): self
    {
        $argv = ['python3', self::SERVE, $kind, ...$args];
        if ($dir !== null) {
            array_push($argv, '--dir', $dir);
        }
        $s = new self();
        $proc = proc_open($argv, [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $s->pipes);
        if ($proc === false) {
            throw new RuntimeException('cannot run python3 ' . self::SERVE);
        }
        $s->proc = $proc;
        $s->info = $s->reply("starting $kind " . implode(' ', $args));
        return $s;
    }

    /** @return array<string, mixed> */
    private function reply(string $what): array
    {
        $line = fgets($this->pipes[1]);
        if ($line === false) {
            $this->stop();
            throw new RuntimeException("$what: serve.py ended without an answer");
        }
        $reply = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        if (($reply['ok'] ?? false) !== true) {
            throw new RuntimeException("$what: " . ($reply['error'] ?? '?') . "\n" . ($reply['log'] ?? ''));
        }
        return $reply;
    }

    /**
     * One command (`restart`, `kill master`, `failover`...); returns the new description.
     *
     * @return array<string, mixed>
     */
    public function command(string $line): array
    {
        fwrite($this->pipes[0], "$line\n");
        fflush($this->pipes[0]);
        return $this->info = $this->reply($line);
    }

    /** Stops the servers and removes their files; returns when that is done. */
    public function stop(): void
    {
        if ($this->proc === null) {
            return;
        }
        fclose($this->pipes[0]); // end of input: serve.py cleans up and exits
        stream_get_contents($this->pipes[1]);
        fclose($this->pipes[1]);
        proc_close($this->proc);
        $this->proc = null;
    }

    public function __destruct()
    {
        $this->stop();
    }
}
