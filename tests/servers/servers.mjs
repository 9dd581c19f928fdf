// The Node client of tests/servers/serve.py (see tests/servers/README.md).
//
//   import { startServers } from '../../tests/servers/servers.mjs';
//   const redis = await startServers('redis', ['--password', 'pw'], { dir: tmp });
//   redis.info.redis.port;            // serve.py's JSON description
//   await redis.command('restart');    // same address, empty; redis.info is updated
//   await redis.stop();                // servers stopped, files removed
//
// serve.py reads our end of a pipe: if this process dies in any way, the pipe closes and the
// servers are stopped. Between commands the child does not keep the event loop alive, so a
// test file that forgets stop() still ends (and its servers with it).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SERVE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'serve.py');

class Servers {
  constructor(child) {
    this.child = child;
    this.info = null;
    this.pending = [];
    this.exited = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const p = this.pending.shift();
      if (p) p.resolve(line);
    });
    child.on('exit', (code) => {
      this.exited = true;
      for (const p of this.pending.splice(0)) p.reject(new Error(`serve.py exited (${code}) without an answer`));
      this.idle();
    });
  }

  busy() {
    this.child.ref();
    this.child.stdout.ref();
  }

  idle() {
    this.child.unref();
    this.child.stdout.unref();
    this.child.stdin.unref?.();
  }

  async reply(what) {
    if (this.exited) throw new Error(`${what}: serve.py has exited`);
    this.busy();
    try {
      const line = await new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
      const reply = JSON.parse(line);
      if (!reply.ok) throw new Error(`${what}: ${reply.error}\n${reply.log ?? ''}`);
      return reply;
    } finally {
      if (this.pending.length === 0) this.idle();
    }
  }

  /** One command (`restart`, `kill master`, `failover`...); resolves to the new description. */
  async command(line) {
    const answer = this.reply(line);
    this.child.stdin.write(`${line}\n`);
    this.info = await answer;
    return this.info;
  }

  /** Stops the servers and removes their files; resolves when that is done. */
  async stop() {
    if (this.exited) return;
    this.busy();
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exited;
  }
}

/** Starts `kind` (redis, sentinel, postgres, fpm, certs) with serve.py's options. */
export async function startServers(kind, args = [], { dir } = {}) {
  const argv = [SERVE, kind, ...args, ...(dir ? ['--dir', dir] : [])];
  const child = spawn('python3', argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  const s = new Servers(child);
  s.info = await s.reply(`starting ${kind} ${args.join(' ')}`);
  return s;
}
