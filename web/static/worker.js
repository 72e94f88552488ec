// The benchmark worker (a dedicated module worker): loads the wasm built from web/ (wasm-bindgen
// --target web, in ./pkg/) and runs what the page asks. OPFS sync access handles exist only in
// dedicated workers, and SQLite blocks this thread while it works, not the page's.
//
// Messages in:  {type: 'hello', commit}            -> {type: 'ready', environment, backends, presets}
//               {type: 'run', config}              -> {type: 'progress', progress}* then
//                                                     {type: 'result', result}
// Any failure:  {type: 'fatal', error}  (the wasm failed to load, or panicked: terminate me)
// Also:         {type: 'console-error', message}   (console.error and rejections in here)
import init, { run, environment, backends, presets } from './pkg/web.js';

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

// Start loading at once; messages that arrive meanwhile wait for it.
const ready = init();

self.onmessage = async ({ data }) => {
  try {
    await ready;
    if (data.type === 'hello') {
      const env = JSON.parse(await environment(data.commit || undefined));
      post({ type: 'ready', environment: env, backends: JSON.parse(backends()), presets: JSON.parse(presets()) });
    } else if (data.type === 'run') {
      const json = await run(JSON.stringify(data.config), (p) => post({ type: 'progress', progress: JSON.parse(p) }));
      post({ type: 'result', result: JSON.parse(json) });
    }
  } catch (e) {
    post({ type: 'fatal', error: describe(e) });
  }
};
