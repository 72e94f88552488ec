// The harness's dedicated module worker: one unit (backend list, one suite run or one batch run)
// per worker, then the page terminates it (a fresh worker per backend run, as the page does).
import { peerBackends, runPeerSuite, runPeerBatch, PACKAGES, OPFS_DIR } from '../index.js';

/** Names under the OPFS root (recursively, `dir/` for directories) and IndexedDB names. */
async function listStorage() {
  const opfs = [];
  const walk = async (dir, prefix, depth) => {
    // Nothing else runs in this worker meanwhile; a directory that vanishes is an error.
    for await (const [name, handle] of dir.entries()) {
      const path = `${prefix}${name}${handle.kind === 'directory' ? '/' : ''}`;
      opfs.push(path);
      if (handle.kind === 'directory' && depth < 3) await walk(handle, path, depth + 1);
    }
  };
  if (navigator.storage?.getDirectory) await walk(await navigator.storage.getDirectory(), '', 0);
  const idb = globalThis.indexedDB?.databases ? (await indexedDB.databases()).map((d) => d.name) : [];
  return { opfs: opfs.sort(), idb: idb.sort() };
}

/** The version in each copied package.json, next to the one index.js declares. */
async function packageVersions() {
  const out = {};
  for (const [lib, p] of Object.entries(PACKAGES)) {
    const res = await fetch(new URL(`../node_modules/${p.package}/package.json`, import.meta.url));
    const served = res.ok ? (await res.json()).version : `HTTP ${res.status}`;
    out[lib] = { package: p.package, declared: p.version, served };
  }
  return out;
}

self.onmessage = async (ev) => {
  const { op, name, fixture } = ev.data;
  try {
    let result;
    if (op === 'backends') {
      result = {
        backends: await peerBackends(),
        packages: await packageVersions(),
        storage: await listStorage(),
        opfs_dir: OPFS_DIR,
        env: {
          user_agent: navigator.userAgent,
          cross_origin_isolated: globalThis.crossOriginIsolated ?? null,
          shared_array_buffer: typeof SharedArrayBuffer !== 'undefined',
          hardware_concurrency: navigator.hardwareConcurrency ?? null,
        },
      };
    } else if (op === 'failure') {
      // A case that fails must reject with the backend, the phase and the case in the message,
      // after cleaning up (the storage is checked by the page).
      const cases = [{ number: 1, title: 'bad', sql: 'CREATE TABLE t1(a INTEGER);\nSELECT * FROM no_such_table;\n' }];
      let message = null;
      try {
        await runPeerSuite(name, cases);
      } catch (e) {
        message = e.message;
      }
      result = { message, storage_after: await listStorage() };
    } else {
      const res = await fetch(fixture);
      if (!res.ok) throw new Error(`fixture ${fixture}: HTTP ${res.status}`);
      const fx = await res.json();
      // What the backend holds once its workload is done (listed in the afterWorkload hook,
      // outside every timed phase): the harness checks that every new entry is one this module
      // owns.
      let during = null;
      const options = {
        onProgress: (e) => self.postMessage({ progress: e }),
        afterWorkload: async () => { during = await listStorage(); },
      };
      if (op === 'suite') result = await runPeerSuite(name, fx.cases, options);
      else if (op === 'batch') result = await runPeerBatch(name, fx.batch, options);
      else throw new Error(`unknown op ${op}`);
      result.storage_during = during;
      result.storage_after = await listStorage();
    }
    self.postMessage({ ok: true, result });
  } catch (e) {
    self.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e), stack: e?.stack ?? null });
  }
};
