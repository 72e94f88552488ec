// The benchmark worker (a dedicated module worker): loads the wasm built from web/ (wasm-bindgen
// --target web, in ./pkg/) and runs what the page asks. OPFS sync access handles exist only in
// dedicated workers, and SQLite blocks this thread while it works, not the page's.
//
// Messages in:  {type: 'hello', commit, backends?}  -> {type: 'ready', environment, backends, presets, selected}
//                                                     (selected: the backend names the filters
//                                                     `backends` pick, by the Rust rule; null without)
//               {type: 'run', config}              -> {type: 'selection', names} (what this run runs),
//                                                     {type: 'progress', progress}* then
//                                                     {type: 'result', result, json}
//               {type: 'load', id, text}           -> {type: 'loaded', id, result} | {type: 'loaded', id, error}
//                                                     (a result file converted and summarized in Rust)
//               {type: 'calibrate', id}            -> {type: 'calibrated', id, samples_ms: [..]}
//                                                     (a fixed CPU-bound loop, 9 times: the runner
//                                                     measures how much phone emulation slows this thread)
// Any failure:  {type: 'fatal', error}  (the wasm failed to load, or panicked: terminate me)
// Also:         {type: 'console-error', message}   (console.error and rejections in here)
//
// Peers: if the page has ./peers/index.js, it is imported here and handed to the wasm, which
// runs its backends in the same rounds as ours (contract: web/README.md, "Peers"). No such
// file: no peers. A file that exists but fails to import is reported as a console error.
import init, { run, environment, backends, presets, load_document, selected_backends } from './pkg/web.js';

const post = (message) => self.postMessage(message);

const describe = (e) => {
  let text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  // The panic hook leaves the Rust message here; the rejection itself only says "unreachable".
  if (self.__wasmPanic) text += ` (${self.__wasmPanic})`;
  return text;
};

// Forward this worker's errors to the page, which records them in window.__bench.consoleErrors.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  consoleError(...args);
  post({ type: 'console-error', message: args.map((a) => (a instanceof Error ? describe(a) : String(a))).join(' ') });
};
self.addEventListener('unhandledrejection', (event) => {
  post({ type: 'console-error', message: `worker: unhandled rejection: ${describe(event.reason)}` });
});

/** The peer module, or undefined when the page has none (a 404 is "none", not an error). */
async function loadPeers() {
  const url = new URL('./peers/index.js', import.meta.url);
  let found = false;
  try {
    const head = await fetch(url, { method: 'HEAD', cache: 'no-store' });
    found = head.ok;
  } catch {
    found = false;
  }
  if (!found) return undefined;
  try {
    return await import(url.href);
  } catch (e) {
    console.error(`peers: ./peers/index.js exists but could not be imported: ${describe(e)}`);
    return undefined;
  }
}

/** Every backend name of a `backends()` list (each suite's list but raw's), once each. */
const namesOf = (list) => [...new Set(Object.entries(list).flatMap(([suite, l]) => (suite !== 'raw' && Array.isArray(l) ? l.map((b) => b.name) : [])))];
/** The names among `names` that a run of `config` would run (the rule lives in Rust). */
const selectedBy = (config, names) => JSON.parse(selected_backends(JSON.stringify(config), JSON.stringify(names)));
let names = [];

// Start loading at once; messages that arrive meanwhile wait for it.
const ready = Promise.all([init(), loadPeers()]);

self.onmessage = async ({ data }) => {
  try {
    const [, peers] = await ready;
    if (data.type === 'hello') {
      const env = JSON.parse(await environment(data.commit || undefined));
      const list = JSON.parse(await backends(peers));
      if (list.peer_error) console.error(`peers: ${list.peer_error}`);
      names = namesOf(list);
      const selected = data.backends ? selectedBy({ backends: data.backends }, names) : null;
      post({ type: 'ready', environment: env, backends: list, presets: JSON.parse(presets()), selected });
    } else if (data.type === 'run') {
      post({ type: 'selection', names: selectedBy(data.config, names) });
      const json = await run(JSON.stringify(data.config), (p) => post({ type: 'progress', progress: JSON.parse(p) }), peers);
      // The text too: JSON.parse turns integers above 2^53 (the bootstrap seed) into nearby
      // doubles; the text is what the runner saves and the page downloads.
      post({ type: 'result', result: JSON.parse(json), json });
    } else if (data.type === 'calibrate') {
      const samples = [];
      for (let k = 0; k < 9; k++) {
        const t = performance.now();
        let x = 0;
        for (let i = 0; i < 2e7; i++) x = (x + i * 31) % 1000003;
        samples.push(performance.now() - t);
        if (x < 0) samples.push(x); // never true; keeps the loop from being optimized away
      }
      post({ type: 'calibrated', id: data.id, samples_ms: samples });
    } else if (data.type === 'load') {
      try {
        post({ type: 'loaded', id: data.id, result: JSON.parse(load_document(data.text)) });
      } catch (e) {
        post({ type: 'loaded', id: data.id, error: describe(e) });
      }
    }
  } catch (e) {
    post({ type: 'fatal', error: describe(e) });
  }
};
