// Runs a page in headless Chromium and prints what its `window.result` promise gives: the page
// is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: no port, no
// server), which waits for the promise itself, so the run takes as long as the page's work
// and no longer (a virtual-time budget would freeze Date.now(), which the isolated generator
// waits on). `node chromium.mjs <page.html> <profile dir>`; exits 1 unless the result starts
// with "ok ".
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const [page, profile] = process.argv.slice(2);
const browser = spawn('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-extensions', `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank'],
{ stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
browser.stderr.on('data', (d) => { stderr += d; });
const [toBrowser, fromBrowser] = [browser.stdio[3], browser.stdio[4]];
const waiting = new Map();
let nextId = 1;
let buffer = '';
fromBrowser.on('data', (chunk) => {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    const w = waiting.get(message.id);
    if (w) {
      waiting.delete(message.id);
      if (message.error) w.reject(new Error(JSON.stringify(message.error)));
      else w.resolve(message.result);
    }
  }
});
const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
  const id = nextId++;
  waiting.set(id, { resolve, reject });
  toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
});
// Chromium's exit (with all its processes: their pipe ends close), which the run waits for
// before it ends, so that nothing writes to the profile directory its caller removes.
const exited = new Promise((resolve) => browser.on('close', resolve));
browser.on('exit', (code) => {
  for (const w of waiting.values()) w.reject(new Error(`chromium exited (${code}): ${stderr.slice(-2000)}`));
});

let status = 1;
try {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true }, undefined);
  await send('Page.enable', {}, sessionId);
  const loaded = new Promise((resolve) => {
    fromBrowser.on('data', function onData(chunk) {
      if (String(chunk).includes('"Page.loadEventFired"')) {
        fromBrowser.off('data', onData);
        resolve();
      }
    });
  });
  await send('Page.navigate', { url: pathToFileURL(page).href }, sessionId);
  await loaded;
  // The page's module script sets window.result (a promise) as it starts: wait for it to be
  // there, then for it to settle.
  const { result } = await send('Runtime.evaluate', {
    expression: `new Promise((resolve) => { const poll = () => window.result ? window.result.then(resolve) : setTimeout(poll, 10); poll(); })`,
    awaitPromise: true,
    returnByValue: true,
  }, sessionId);
  console.log(result.value);
  status = String(result.value).startsWith('ok ') ? 0 : 1;
} catch (e) {
  console.log(`FAIL ${e.message}`);
}
await send('Browser.close').catch(() => browser.kill());
await exited;
process.exit(status);
