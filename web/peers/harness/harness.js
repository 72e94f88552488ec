// Main thread of the peers harness: asks a worker for the peer list, then runs every available
// peer's suite and batch, each in a fresh dedicated module worker, and checks what came back.
// Result in window.__peers = {state: 'running'|'done'|'error', progress, result, error}.
const params = new URLSearchParams(location.search);
const fixtureUrl = new URL(params.get('fixture') ?? 'fixture.json', location.href).href;
const filters = (params.get('backends') ?? 'all').split(',').filter(Boolean);
const timeoutMs = Number(params.get('timeout_s') ?? 900) * 1000;

const state = { state: 'running', progress: null, result: null, error: null, consoleErrors: [] };
window.__peers = state;
const logEl = document.getElementById('log');
const log = (line) => { logEl.textContent += `${line}\n`; };
const origError = console.error;
console.error = (...args) => { state.consoleErrors.push(args.map(String).join(' ')); origError(...args); };

/** Runs one message in a fresh module worker and resolves to its result. */
function inWorker(msg) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    const timer = setTimeout(() => { w.terminate(); reject(new Error(`timed out after ${timeoutMs / 1000} s`)); }, timeoutMs);
    w.onmessage = (ev) => {
      if (ev.data.progress) { state.progress = ev.data.progress; return; }
      clearTimeout(timer);
      w.terminate();
      if (ev.data.ok) resolve(ev.data.result); else reject(new Error(ev.data.error));
    };
    w.onerror = (ev) => { clearTimeout(timer); w.terminate(); reject(new Error(`worker error: ${ev.message ?? ev}`)); };
    w.postMessage(msg);
  });
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function main() {
  const fixture = await (await fetch(fixtureUrl)).json();
  const info = await inWorker({ op: 'backends' });
  const problems = [];
  for (const [lib, p] of Object.entries(info.packages)) {
    if (p.declared !== p.served) problems.push(`${lib}: index.js declares ${p.package} ${p.declared}, the copied package.json says ${p.served}`);
  }
  const baseline = info.storage;
  const runs = [];
  const wanted = (n) => filters.includes('all') || filters.some((f) => n.includes(f));
  for (const b of info.backends.filter((x) => wanted(x.name))) {
    const run = { name: b.name, available: b.available, skip_reason: b.skip_reason, suite: null, batch: null, errors: [], checks: [] };
    runs.push(run);
    if (!b.available) { log(`${b.name}: skipped: ${b.skip_reason}`); continue; }
    for (const op of ['suite', 'batch']) {
      log(`${b.name}: ${op} …`);
      try {
        const r = await inWorker({ op, name: b.name, fixture: fixtureUrl });
        run[op] = r;
        // Checks: every phase present as the contract says, storage wiped, hashes as sent.
        const ph = r.phases;
        const timed = ['prepare_ms', 'init_ms', 'close_ms'].every((k) => Number.isFinite(ph[k]) && ph[k] >= 0);
        const lifecycle = b.persistent
          ? ['sync_ms', 'reopen_ms', 'verify_ms'].every((k) => Number.isFinite(ph[k]))
          : ['sync_ms', 'reopen_ms', 'verify_ms'].every((k) => ph[k] === null);
        run.checks.push([`${op}: phases complete`, timed && lifecycle]);
        run.checks.push([`${op}: storage left as found`, same(r.storage_after, baseline)]);
        // Every entry the run created is one of this module's: OPFS under peers/ (or
        // wa-sqlite's .ahp-* temporary directories), IndexedDB databases named peers-… (PGlite's
        // IDBFS prefixes the mount point /pglite/).
        const created = {
          opfs: (r.storage_during?.opfs ?? []).filter((n) => !baseline.opfs.includes(n)),
          idb: (r.storage_during?.idb ?? []).filter((n) => !baseline.idb.includes(n)),
        };
        run[`${op}_storage_created`] = created;
        const owned = created.opfs.every((n) => n.startsWith(`${info.opfs_dir}/`) || n.startsWith('.ahp-'))
          && created.idb.every((n) => n.startsWith(`${info.opfs_dir}-`) || n.startsWith(`/pglite/${info.opfs_dir}-`));
        run.checks.push([`${op}: only its own storage used (${[...created.opfs.filter((n) => n.split('/').length <= 3), ...created.idb].join(' ') || 'none'})`, owned && (!b.persistent || created.opfs.length + created.idb.length > 0)]);
        if (!same(r.storage_after, baseline)) run.errors.push(`${op}: storage after ${JSON.stringify(r.storage_after)} != before ${JSON.stringify(baseline)}`);
        if (op === 'suite') {
          run.checks.push(['suite: sql_sha256 equals the generator\'s', r.sql_sha256 === fixture.sha256]);
          run.checks.push(['suite: 16 cases timed', r.cases.length === fixture.cases.length && r.cases.every((c) => Number.isFinite(c.ms))]);
          if (b.engine === 'sqlite') run.checks.push(['suite: SQLite peers run the SQL unchanged', r.adapted_sha256 === fixture.sha256]);
          else run.checks.push(['suite: PGlite runs an adapted text (recorded)', typeof r.adapted_sha256 === 'string' && r.adapted_sha256 !== fixture.sha256]);
          log(`${b.name}: suite ${r.total_ms.toFixed(1)} ms (test 1 ${r.test1_ms.toFixed(1)}), init ${ph.init_ms.toFixed(1)}, reopen ${ph.reopen_ms?.toFixed(1) ?? '–'}`);
        } else {
          run.checks.push(['batch: all rows', r.rows === fixture.batch.rows.length]);
          log(`${b.name}: batch ${r.ms.toFixed(1)} ms (${r.rows} rows)`);
        }
      } catch (e) {
        run.errors.push(`${op}: ${e.message}`);
        log(`${b.name}: ${op} FAILED: ${e.message}`);
      }
    }
    for (const [what, ok] of run.checks) if (!ok) run.errors.push(`check failed: ${what}`);
  }
  // Failure paths: an unknown backend, and a failing case on two persistent backends.
  const failures = [];
  const unknown = await inWorker({ op: 'failure', name: 'no-such-backend' }).catch((e) => ({ message: e.message }));
  failures.push(['unknown backend rejected', /unknown peer backend/.test(unknown.message ?? '')]);
  for (const name of ['sqlitewasm-opfs-sahpool', 'wasqlite-opfs-coopsync']) {
    if (!info.backends.find((b) => b.name === name)?.available || !wanted(name)) continue;
    try {
      const r = await inWorker({ op: 'failure', name });
      failures.push([`${name}: failing case rejected as "${r.message}"`, (r.message ?? '').startsWith(`${name}: workload: case 1 (bad): `)]);
      failures.push([`${name}: storage left as found after the failure`, same(r.storage_after, baseline)]);
    } catch (e) {
      failures.push([`${name}: failure run: ${e.message}`, false]);
    }
  }
  for (const [what, ok] of failures) log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  state.result = {
    failure_checks: failures,
    generated_at: new Date().toISOString(),
    fixture: { url: fixtureUrl, seed: fixture.seed, scale_divisor: fixture.scale_divisor, sha256: fixture.sha256, batch_rows: fixture.batch.rows.length },
    env: info.env,
    packages: info.packages,
    storage_before: baseline,
    backends: info.backends,
    runs,
    problems,
  };
  state.state = 'done';
  log('done');
}

main().catch((e) => { state.error = String(e?.stack ?? e); state.state = 'error'; log(`error: ${state.error}`); });
