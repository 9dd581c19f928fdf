// Writes a page that runs the shared vectors through the installed @libsnowflake/wasm in a
// browser, with nothing to fetch (no server, no network): the package's own files as they
// were installed (snowflake.js as a data: module, snowflake.wasm as bytes given to init()),
// vectors.mjs, and the vector files inlined. The page's `window.result` is a promise of its
// summary, or of the failure (chromium.mjs waits for it), also written into <pre id="result">.
// `node page.mjs <installed package dir> <vectors dir> <out.html>`
import { readFile, writeFile } from 'node:fs/promises';

const [pkg, vectors, out] = process.argv.slice(2);
const b64 = async (file) => (await readFile(file)).toString('base64');
const files = ['layouts.json', 'encodings.json', 'uuid.json', 'generator.json', 'public_ids.json'];
const data = {};
for (const f of files) data[f] = JSON.parse(await readFile(`${vectors}/${f}`, 'utf8'));
const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>@libsnowflake/wasm vectors</title></head>
<body><pre id="result">pending</pre>
<script type="module">
window.result = (async () => {
try {
  const LIB_URL = 'data:text/javascript;base64,${await b64(`${pkg}/snowflake.js`)}';
  const lib = await import(LIB_URL);
  const { check } = await import('data:text/javascript;base64,${await b64(new URL('./vectors.mjs', import.meta.url))}');
  const bytes = Uint8Array.from(atob('${await b64(`${pkg}/snowflake.wasm`)}'), (c) => c.charCodeAt(0));
  await lib.init(bytes);
  const vectors = ${JSON.stringify(data)};
  const summary = await check(lib, async (name) => vectors[name]);
  // A web worker of its own (a classic worker from a blob, which imports the package: a page
  // from file:// may not start a module worker from a blob): its own instance of the module,
  // given the bytes, decodes as the page does.
  const worker = new Worker(URL.createObjectURL(new Blob([\`
    onmessage = async ({ data: { libUrl, bytes, id } }) => {
      try {
        const lib = await import(libUrl);
        await lib.init(bytes);
        postMessage(JSON.stringify(new lib.Layout('twitter').decode(id).fields));
      } catch (e) { postMessage('FAIL ' + e.message); }
    };\`], { type: 'text/javascript' })));
  const fromWorker = await new Promise((resolve) => {
    worker.onmessage = ({ data }) => resolve(data);
    worker.onerror = (e) => resolve('FAIL ' + e.message);
    worker.postMessage({ libUrl: LIB_URL, bytes, id: '1541815603606036480' });
  });
  const want = JSON.stringify(new lib.Layout('twitter').decode('1541815603606036480').fields);
  if (fromWorker !== want) throw new Error('the worker decoded ' + fromWorker + ', the page ' + want);
  return 'ok wasm chromium ' + lib.version() + ' ' + summary + ', a worker ' + navigator.userAgent.match(/Chrome\\/[0-9.]+/);
} catch (e) {
  return 'FAIL ' + e.message + '\\n' + String(e.stack).replace(/data:[^)\\s]+/g, 'data:…');
}
})();
window.result.then((text) => { document.getElementById('result').textContent = text; });
</script></body></html>
`;
await writeFile(out, page);
