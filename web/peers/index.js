// The JavaScript peers of the benchmark page (issue 12): other people's SQLite and Postgres
// builds for the browser, run on the same generated SQL as our backends, phase by phase.
//
// Environment: a dedicated module worker in a secure context (OPFS sync access handles exist
// only there). `sqlitewasm-opfs` also needs cross-origin isolation (SharedArrayBuffer): the
// page's `serve` sends COOP/COEP. Nothing is fetched from the network: every engine is loaded
// by a relative URL from this directory (web/dist/peers/ is a copy of web/peers/ holding only
// the files listed in copy.sh), and the packages are installed from npm at the versions pinned
// in package-lock.json.
//
// API (see README.md for the exact shapes):
//   peerBackends()                      -> [{name, engine, reference, engine_reference, ...}]
//   runPeerSuite(name, cases, options)  -> {phases, cases, total_ms, test1_ms, ...}
//   runPeerBatch(name, batch, options)  -> {phases, rows, ms, ...}
// Each run starts from a wiped state of that backend's own storage (an OPFS directory under
// `peers/`, and its own IndexedDB databases) and ends wiped; a run that fails throws an Error
// whose message names the backend and the phase, after cleaning up.
//
// Lifecycle, mirroring bench-sql/src/runner.rs (every step timed with performance.now()):
//   load (engine, untimed) → prepare → open (init_ms) → cases… → sync → close → reopen → verify
//   → close (untimed) → cleanup (untimed). sync, reopen and verify only for persistent backends.

/** Directory under the OPFS root that holds every peer's storage: `peers/<backend name>`. */
export const OPFS_DIR = 'peers';

/** The page's memory-only SQLite reference (bench-sql's sqlite-wasm-rs memory VFS). */
const SQLITE_REFERENCE = 'sqlite-memvfs';

/** Pragmas every SQLite peer connection gets, as bench-sql's PRAGMAS (SQLite's defaults). */
const SQLITE_PRAGMAS = 'PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;';

/** Tables and indexes the suite creates; after case 16 and a reopen none may exist. */
const SUITE_OBJECTS = ['t1', 't2', 't3', 'i2a', 'i2b', 'i3'];

/** Package versions, as pinned in package.json / package-lock.json (checked by the harness). */
export const PACKAGES = {
  sqlitewasm: { package: '@sqlite.org/sqlite-wasm', version: '3.54.1-build1' },
  wasqlite: { package: '@journeyapps/wa-sqlite', version: '2.0.6' },
  pglite: { package: '@electric-sql/pglite', version: '0.5.17' },
};

const NM = './node_modules';
const SQLITE_WASM_URL = `${NM}/@sqlite.org/sqlite-wasm/dist/index.mjs`;
const WA = `${NM}/@journeyapps/wa-sqlite`;
const PGLITE = `${NM}/@electric-sql/pglite/dist`;

const SQLITE_DURABLE = 'journal_mode=DELETE, synchronous=FULL';
const MEMORY_DB = 'not persistent: in memory, lost on close';

// ----------------------------------------------------------------------------------------
// The backends
// ----------------------------------------------------------------------------------------

/**
 * Every peer backend. `needs` lists the features checked by peerBackends(); `make` builds the
 * driver object used by the runner.
 */
const BACKENDS = [
  {
    name: 'sqlitewasm-memory', engine: 'sqlite', lib: 'sqlitewasm', persistent: false,
    reference: SQLITE_REFERENCE, engine_reference: null, needs: [],
    durability: MEMORY_DB,
    durability_settings: "SQLite WASM oo1.DB(':memory:'): journal_mode=memory (SQLite forces it for :memory:), no VFS file I/O",
    make: () => new SqliteWasmDriver('memory'),
  },
  {
    name: 'sqlitewasm-opfs-sahpool', engine: 'sqlite', lib: 'sqlitewasm', persistent: true,
    reference: SQLITE_REFERENCE, engine_reference: 'sqlitewasm-memory', needs: ['opfs-sync'],
    durability: 'power-loss safe: an OPFS flush() on every xSync (synchronous=FULL)',
    durability_settings: `${SQLITE_DURABLE}; opfs-sahpool (pool of pre-opened OPFS files, initialCapacity 6) flushes the access handle on every xSync`,
    make: () => new SqliteWasmDriver('sahpool'),
  },
  {
    name: 'sqlitewasm-opfs', engine: 'sqlite', lib: 'sqlitewasm', persistent: true,
    reference: SQLITE_REFERENCE, engine_reference: 'sqlitewasm-memory',
    needs: ['opfs-sync', 'shared-array-buffer'],
    durability: 'power-loss safe: an OPFS flush() on every xSync (synchronous=FULL)',
    durability_settings: `${SQLITE_DURABLE}; "opfs" VFS: every file op goes to its async proxy worker over SharedArrayBuffer+Atomics, xSync awaits flush() there`,
    make: () => new SqliteWasmDriver('opfs'),
  },
  {
    name: 'wasqlite-memory', engine: 'sqlite', lib: 'wasqlite', persistent: false,
    reference: SQLITE_REFERENCE, engine_reference: null, needs: [],
    durability: MEMORY_DB,
    durability_settings: "wa-sqlite synchronous build, open_v2(':memory:'): journal_mode=memory (forced for :memory:)",
    make: () => new WaSqliteDriver('memory'),
  },
  {
    name: 'wasqlite-opfs-coopsync', engine: 'sqlite', lib: 'wasqlite', persistent: true,
    reference: SQLITE_REFERENCE, engine_reference: 'wasqlite-memory', needs: ['opfs-sync', 'web-locks'],
    durability: 'power-loss safe: an OPFS flush() on every xSync (synchronous=FULL)',
    durability_settings: `${SQLITE_DURABLE}; OPFSCoopSyncVFS (synchronous build): one OPFS file per database file, access handles held while the connection is open, flush() on every xSync`,
    make: () => new WaSqliteDriver('coopsync'),
  },
  {
    name: 'wasqlite-opfs-ahp', engine: 'sqlite', lib: 'wasqlite', persistent: true,
    reference: SQLITE_REFERENCE, engine_reference: 'wasqlite-memory', needs: ['opfs-sync'],
    durability: 'power-loss safe: an OPFS flush() on every xSync (synchronous=FULL)',
    durability_settings: `${SQLITE_DURABLE}; AccessHandlePoolVFS (synchronous build): pool of pre-opened OPFS files (capacity 6), flush() on every xSync`,
    make: () => new WaSqliteDriver('ahp'),
  },
  {
    name: 'wasqlite-idb-batchatomic', engine: 'sqlite', lib: 'wasqlite', persistent: true,
    reference: SQLITE_REFERENCE, engine_reference: 'wasqlite-memory', needs: ['indexeddb', 'web-locks'],
    durability: "a COMMIT waits for an IndexedDB transaction with durability 'strict' (synchronous=FULL)",
    durability_settings: `${SQLITE_DURABLE}; IDBBatchAtomicVFS (asyncify build): declares SQLITE_IOCAP_BATCH_ATOMIC, so a transaction whose journal fits the page cache (cache_size default, 2 MiB) is written as one IndexedDB transaction without a rollback journal; synchronous=FULL selects IDB durability 'strict' (NORMAL or OFF would select 'relaxed')`,
    make: () => new WaSqliteDriver('idb'),
  },
  {
    name: 'pglite-memory', engine: 'pglite', lib: 'pglite', persistent: false,
    reference: null, engine_reference: null, needs: [],
    durability: MEMORY_DB,
    durability_settings: "new PGlite('memory://'): Emscripten MEMFS, nothing persists",
    make: () => new PgliteDriver('memory'),
  },
  {
    name: 'pglite-idb', engine: 'pglite', lib: 'pglite', persistent: true,
    reference: 'pglite-memory', engine_reference: 'pglite-memory', needs: ['indexeddb'],
    durability: 'each exec() call resolves after its changed files are synced to IndexedDB (not each COMMIT inside it)',
    durability_settings: "new PGlite('idb://…', {relaxedDurability: false}): the data directory lives in memory (Emscripten IDBFS); every exec()/query() awaits FS.syncfs to IndexedDB (browser-default transaction durability) before it resolves; Postgres' own fsyncs go to memory",
    make: () => new PgliteDriver('idb'),
  },
  {
    name: 'pglite-opfs-ahp', engine: 'pglite', lib: 'pglite', persistent: true,
    reference: 'pglite-memory', engine_reference: 'pglite-memory', needs: ['opfs-sync'],
    durability: 'each exec() call resolves after flush() of every OPFS handle it dirtied (not each COMMIT inside it)',
    durability_settings: "new PGlite('opfs-ahp://…', {relaxedDurability: false}): a pool of pre-opened OPFS access handles (1,000 at first) holding the data directory's files, a state file logging every metadata operation as a JSON line (flushed with the data; compacted every 60 s); every exec()/query() awaits flush() of each dirty handle before it resolves; Postgres' own fsyncs do not flush",
    make: () => new PgliteDriver('opfs-ahp'),
  },
];

/** Feature checks: a missing feature makes a backend unavailable, with the reason. */
function missingFeature(need) {
  const g = globalThis;
  switch (need) {
    case 'opfs-sync':
      if (!g.navigator?.storage?.getDirectory) return 'OPFS missing (navigator.storage.getDirectory)';
      if (!g.FileSystemFileHandle?.prototype?.createSyncAccessHandle) {
        return 'OPFS sync access handles missing (FileSystemFileHandle.createSyncAccessHandle: dedicated workers only)';
      }
      if (typeof g.DedicatedWorkerGlobalScope === 'undefined' || !(g.self instanceof g.DedicatedWorkerGlobalScope)) {
        return 'not running in a dedicated worker (OPFS sync access handles exist only there)';
      }
      return null;
    case 'shared-array-buffer':
      if (typeof g.SharedArrayBuffer === 'undefined' || typeof g.Atomics === 'undefined') {
        return 'SharedArrayBuffer/Atomics missing: the page is not cross-origin isolated (COOP/COEP)';
      }
      if (g.crossOriginIsolated === false) return 'not cross-origin isolated (COOP/COEP headers missing)';
      return null;
    case 'indexeddb':
      return g.indexedDB ? null : 'IndexedDB missing';
    case 'web-locks':
      return g.navigator?.locks?.request ? null : 'Web Locks (navigator.locks) missing';
    case 'broadcast-channel':
      return typeof g.BroadcastChannel === 'function' ? null : 'BroadcastChannel missing';
    default:
      return `unknown feature ${need}`;
  }
}

/** The fields each kind of peer reports beside its name, package, version and availability. */
const SUITE_FIELDS = ['engine', 'reference', 'engine_reference', 'durability', 'durability_settings', 'persistent'];
const HANDOFF_FIELDS = ['durability', 'connections'];

/** A peer as the page and the runner see it: `fields` of its entry, and why it cannot run here. */
function describe(b, fields) {
  const reasons = b.needs.map(missingFeature).filter(Boolean);
  const pkg = PACKAGES[b.lib];
  const d = { name: b.name, package: pkg.package, version: pkg.version };
  for (const f of fields) d[f] = b[f];
  d.available = reasons.length === 0;
  d.skip_reason = reasons.length ? reasons.join('; ') : null;
  return d;
}

/** The entry of `list` called `name`; throws if there is none or it cannot run here. */
function named(list, fields, what, name) {
  const b = list.find((x) => x.name === name);
  if (!b) throw new Error(`unknown ${what} ${JSON.stringify(name)} (known: ${list.map((x) => x.name).join(', ')})`);
  const d = describe(b, fields);
  if (!d.available) throw new Error(`${name}: not available here: ${d.skip_reason}`);
  return b;
}

/** Every peer backend with its availability in this context (no engine is loaded). */
export async function peerBackends() {
  return BACKENDS.map((b) => describe(b, SUITE_FIELDS));
}

function backendNamed(name) {
  return named(BACKENDS, SUITE_FIELDS, 'peer backend', name);
}

// ----------------------------------------------------------------------------------------
// SQL adaptation: ONE function per engine; its output's SHA-256 is recorded in each result.
// ----------------------------------------------------------------------------------------

/**
 * The SQL each engine runs, case by case. SQLite peers run the generated text unchanged.
 *
 * PGlite (Postgres) runs it with one change: every statement of case 1 (the autocommit
 * INSERTs) is wrapped in `BEGIN; … COMMIT;`. Why: the whole case goes to Postgres as one
 * simple-query message (pg.exec), and Postgres runs a multi-statement message without explicit
 * transaction control as ONE implicit transaction; the wrap keeps case 1 at one commit per
 * INSERT, as in SQLite. Everything else runs unchanged in Postgres (INTEGER is int4 and every
 * value fits; VARCHAR(100), LIKE on text, avg/count, INSERT … SELECT, DROP TABLE all mean the
 * same). Note what this does not change: PGlite makes data durable at the end of each exec()
 * call (syncToFs), not per COMMIT, so case 1 is 1,000 Postgres commits but one storage sync.
 */
export function adaptSql(engine, cases) {
  if (engine === 'sqlite') return cases.map((c) => ({ number: c.number, title: c.title, sql: c.sql }));
  if (engine !== 'pglite') throw new Error(`adaptSql: unknown engine ${engine}`);
  return cases.map((c) => {
    if (c.number !== 1) return { number: c.number, title: c.title, sql: c.sql };
    const lines = c.sql.split('\n').map((line) =>
      (line.startsWith('INSERT ') && line.endsWith(';') ? `BEGIN; ${line} COMMIT;` : line));
    return { number: c.number, title: c.title, sql: lines.join('\n') };
  });
}

/** Lower-case hex SHA-256 of every case's text, each followed by a NUL byte (as Suite::sha256). */
export async function sqlSha256(cases) {
  const enc = new TextEncoder();
  const parts = cases.map((c) => enc.encode(c.sql));
  const total = parts.reduce((n, p) => n + p.length + 1, 0);
  const buf = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    buf.set(p, at);
    at += p.length + 1; // the NUL separator is already 0
  }
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buf));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

// ----------------------------------------------------------------------------------------
// Storage helpers: only this module's entries are ever removed.
// ----------------------------------------------------------------------------------------

function isNotFound(e) {
  return e && (e.name === 'NotFoundError' || e.name === 'NotFound');
}

/** Removes `path` (relative to the OPFS root, `/`-separated) recursively; absent is fine. */
async function removeOpfsPath(path) {
  const parts = path.split('/').filter(Boolean);
  let dir = await navigator.storage.getDirectory();
  for (const p of parts.slice(0, -1)) {
    try {
      dir = await dir.getDirectoryHandle(p);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }
  try {
    await dir.removeEntry(parts[parts.length - 1], { recursive: true });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Removes the `peers/` directory if nothing is left in it. */
async function removePeersDirIfEmpty() {
  const root = await navigator.storage.getDirectory();
  let dir;
  try {
    dir = await root.getDirectoryHandle(OPFS_DIR);
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  for await (const _ of dir.keys()) return; // not empty: another peer's run left it? keep it
  try {
    await root.removeEntry(OPFS_DIR);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/**
 * wa-sqlite's OPFSCoopSyncVFS keeps temporary files in `.ahp-<random>` directories at the OPFS
 * root, each protected by a Web Lock of the same name while its VFS lives. Removes the ones
 * whose lock is free (the rule wa-sqlite itself applies at start-up).
 */
async function removeFreeAhpDirs() {
  const root = await navigator.storage.getDirectory();
  const names = [];
  for await (const [name, handle] of root.entries()) {
    if (handle.kind === 'directory' && name.startsWith('.ahp-')) names.push(name);
  }
  for (const name of names) {
    await navigator.locks.request(name, { ifAvailable: true }, async (lock) => {
      if (lock) {
        try {
          await root.removeEntry(name, { recursive: true });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    });
  }
}

/** Deletes one IndexedDB database; fails if another connection blocks it for 10 s. */
function deleteIdb(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    const timer = setTimeout(() => reject(new Error(`IndexedDB ${name}: deletion blocked by an open connection for 10 s`)), 10_000);
    req.onsuccess = () => { clearTimeout(timer); resolve(); };
    req.onerror = () => { clearTimeout(timer); reject(req.error ?? new Error(`IndexedDB ${name}: deleteDatabase failed`)); };
    // onblocked: wait (the timer decides); success follows once the connection closes.
  });
}

const now = () => performance.now();

function errorText(e) {
  if (e instanceof Error) return e.message || String(e);
  return typeof e === 'string' ? e : JSON.stringify(e);
}

// ----------------------------------------------------------------------------------------
// SQLite WASM (@sqlite.org/sqlite-wasm)
// ----------------------------------------------------------------------------------------

let sqliteWasmPromise = null;

/** One initialization per worker (it also installs the "opfs" VFS when isolation allows). */
function loadSqliteWasm() {
  if (!sqliteWasmPromise) {
    sqliteWasmPromise = (async () => {
      const mod = await import(SQLITE_WASM_URL);
      return mod.default({
        print: () => {},
        printErr: (...args) => console.warn('sqlite-wasm:', ...args),
      });
    })();
    sqliteWasmPromise.catch(() => { sqliteWasmPromise = null; });
  }
  return sqliteWasmPromise;
}

let runCounter = 0;
const uniqueTag = () => `${Date.now().toString(36)}-${++runCounter}`;

class SqliteWasmDriver {
  constructor(kind) {
    this.kind = kind; // 'memory' | 'sahpool' | 'opfs'
    this.dir = `${OPFS_DIR}/sqlitewasm-${kind === 'opfs' ? 'opfs' : 'opfs-sahpool'}`;
    this.sqlite3 = null;
    this.pool = null;
  }

  async load() {
    this.sqlite3 = await loadSqliteWasm();
    if (this.kind === 'opfs' && !this.sqlite3.capi.sqlite3_vfs_find('opfs')) {
      throw new Error('SQLite WASM did not install its "opfs" VFS (needs SharedArrayBuffer, Atomics and a worker)');
    }
  }

  async prepare() {
    if (this.kind !== 'memory') await removeOpfsPath(this.dir);
  }

  async open() {
    const { oo1 } = this.sqlite3;
    let db;
    if (this.kind === 'memory') {
      db = new oo1.DB(':memory:', 'c');
    } else if (this.kind === 'sahpool') {
      if (!this.pool) {
        // A fresh VFS name per run: installOpfsSAHPoolVfs caches its promise by name.
        this.pool = await this.sqlite3.installOpfsSAHPoolVfs({
          name: `peers-sahpool-${uniqueTag()}`,
          directory: this.dir,
          initialCapacity: 6,
          clearOnInit: false,
        });
      } else {
        await this.pool.unpauseVfs(); // re-acquires every handle and re-reads the pool's headers
      }
      db = new this.pool.OpfsSAHPoolDb('/bench.db');
    } else {
      db = new oo1.DB({ filename: `/${this.dir}/bench.db`, flags: 'c', vfs: 'opfs' });
    }
    try {
      this.execScript(db, SQLITE_PRAGMAS);
    } catch (e) {
      db.close();
      throw e;
    }
    return db;
  }

  /**
   * Runs a script like sqlite3_exec: prepare_v3 on a pointer into one NUL-terminated copy of
   * the script (length counted up to and including the NUL), step to completion, finalize,
   * advance to the tail. (oo1.DB.exec copies the remaining text for every statement:
   * quadratic on a multi-megabyte case.)
   */
  execScript(db, sql) {
    const { capi, wasm } = this.sqlite3;
    const pDb = db.pointer;
    const bytes = new TextEncoder().encode(sql);
    const pSql = wasm.alloc(bytes.length + 1);
    const stack = wasm.pstack.pointer;
    try {
      wasm.heap8u().set(bytes, Number(pSql));
      wasm.poke8(wasm.ptr.add(pSql, bytes.length), 0);
      const ppStmt = wasm.pstack.allocPtr();
      const pzTail = wasm.pstack.allocPtr();
      const end = wasm.ptr.add(pSql, bytes.length);
      let p = pSql;
      while (Number(p) < Number(end)) {
        // The length includes the NUL terminator: with a length that stops short of a NUL,
        // sqlite3_prepare copies all of the remaining text first (quadratic over a script).
        let rc = capi.sqlite3_prepare_v3(pDb, p, Number(end) - Number(p) + 1, 0, ppStmt, pzTail);
        if (rc !== capi.SQLITE_OK) throw new Error(`prepare: ${capi.sqlite3_errmsg(pDb)} (rc ${rc})`);
        const pStmt = wasm.peekPtr(ppStmt);
        p = wasm.peekPtr(pzTail);
        if (!pStmt) continue; // only whitespace or a comment was left
        while ((rc = capi.sqlite3_step(pStmt)) === capi.SQLITE_ROW) { /* step every row */ }
        capi.sqlite3_finalize(pStmt);
        if (rc !== capi.SQLITE_DONE) throw new Error(`step: ${capi.sqlite3_errmsg(pDb)} (rc ${rc})`);
      }
    } finally {
      wasm.pstack.restore(stack);
      wasm.dealloc(pSql);
    }
  }

  async exec(db, sql) {
    this.execScript(db, sql);
  }

  async batch(db, batch) {
    db.exec('BEGIN');
    const stmt = db.prepare(batch.insert_sql);
    try {
      for (const row of batch.rows) {
        stmt.bind(row);
        stmt.step();
        stmt.reset();
      }
    } catch (e) {
      try { stmt.finalize(); } catch { /* keep the first error */ }
      try { db.exec('ROLLBACK'); } catch { /* idem */ }
      throw e;
    }
    stmt.finalize();
    db.exec('COMMIT');
  }

  query(db, sql) {
    return db.exec({ sql, rowMode: 'array', returnValue: 'resultRows' });
  }

  /** synchronous=FULL: every commit was flushed before it returned; nothing is pending. */
  async sync() {}

  async close(db) {
    db.close();
    if (this.pool) this.pool.pauseVfs(); // releases every access handle, unregisters the VFS
  }

  async cleanup() {
    if (this.pool) {
      const pool = this.pool;
      this.pool = null;
      if (pool.isPaused()) await pool.unpauseVfs();
      await pool.removeVfs(); // releases the handles and removes the pool's directory
    }
    if (this.kind !== 'memory') await removeOpfsPath(this.dir);
    await removePeersDirIfEmpty();
  }
}

// ----------------------------------------------------------------------------------------
// wa-sqlite (@journeyapps/wa-sqlite)
// ----------------------------------------------------------------------------------------

/**
 * A fresh WebAssembly instance per run (the synchronous build for memory and the OPFS VFSes,
 * the asyncify build for IndexedDB), so that no state or memory growth carries over.
 */
async function loadWaSqlite(asyncBuild) {
  const [factory, api] = await Promise.all([
    import(`${WA}/dist/${asyncBuild ? 'wa-sqlite-async' : 'wa-sqlite'}.mjs`),
    import(`${WA}/src/sqlite-api.js`),
  ]);
  const module = await factory.default();
  return { module, sqlite3: api.Factory(module), api };
}

class WaSqliteDriver {
  constructor(kind) {
    this.kind = kind; // 'memory' | 'coopsync' | 'ahp' | 'idb'
    this.dir = `${OPFS_DIR}/wasqlite-${kind === 'ahp' ? 'opfs-ahp' : 'opfs-coopsync'}`;
    this.idbName = `${OPFS_DIR}-wasqlite-idb-batchatomic`;
    this.vfs = null;
  }

  async load() {
    const w = await loadWaSqlite(this.kind === 'idb');
    this.module = w.module;
    this.sqlite3 = w.sqlite3;
    this.api = w.api;
    this.vfsName = `peers-${this.kind}-${uniqueTag()}`;
  }

  async prepare() {
    if (this.kind === 'coopsync' || this.kind === 'ahp') await removeOpfsPath(this.dir);
    if (this.kind === 'coopsync') await removeFreeAhpDirs();
    if (this.kind === 'idb') await deleteIdb(this.idbName);
  }

  async makeVfs() {
    switch (this.kind) {
      case 'coopsync': {
        const { OPFSCoopSyncVFS } = await import(`${WA}/src/examples/OPFSCoopSyncVFS.js`);
        return OPFSCoopSyncVFS.create(this.vfsName, this.module);
      }
      case 'ahp': {
        // AccessHandlePoolVFS's VFS name is its OPFS directory path. close() unregisters it
        // (dropVfs), so reopen can register a new pool of the same name that reads the
        // directory's headers afresh.
        const { AccessHandlePoolVFS } = await import(`${WA}/src/examples/AccessHandlePoolVFS.js`);
        return AccessHandlePoolVFS.create(this.dir, this.module);
      }
      case 'idb': {
        const { IDBBatchAtomicVFS } = await import(`${WA}/src/examples/IDBBatchAtomicVFS.js`);
        return IDBBatchAtomicVFS.create(this.vfsName, this.module, { idbName: this.idbName });
      }
      default:
        throw new Error(`no VFS for ${this.kind}`);
    }
  }

  dbPath() {
    return this.kind === 'coopsync' ? `/${this.dir}/bench.db` : '/bench.db';
  }

  async open() {
    const { sqlite3 } = this;
    let db;
    if (this.kind === 'memory') {
      db = await sqlite3.open_v2(':memory:');
    } else {
      if (!this.vfs) {
        this.vfs = await this.makeVfs();
        sqlite3.vfs_register(this.vfs, false);
      }
      db = await sqlite3.open_v2(this.dbPath(), undefined, this.vfs.name);
    }
    try {
      await sqlite3.exec(db, SQLITE_PRAGMAS);
    } catch (e) {
      await sqlite3.close(db);
      throw e;
    }
    return db;
  }

  /** wa-sqlite's exec: prepare_v3 on a pointer into one copy of the script (linear). */
  async exec(db, sql) {
    await this.sqlite3.exec(db, sql);
  }

  async batch(db, batch) {
    const { sqlite3 } = this;
    await sqlite3.exec(db, 'BEGIN');
    try {
      for await (const stmt of sqlite3.statements(db, batch.insert_sql)) {
        for (const row of batch.rows) {
          sqlite3.bind_collection(stmt, row);
          await sqlite3.step(stmt);
          await sqlite3.reset(stmt);
        }
      }
    } catch (e) {
      try { await sqlite3.exec(db, 'ROLLBACK'); } catch { /* keep the first error */ }
      throw e;
    }
    await sqlite3.exec(db, 'COMMIT');
  }

  async query(db, sql) {
    const rows = [];
    await this.sqlite3.exec(db, sql, (row) => { rows.push(row); });
    return rows;
  }

  /** synchronous=FULL: every commit was flushed (or IDB-committed 'strict') before it returned. */
  async sync() {}

  /** Closes the connection; pool and IDB VFSes also release their handles / IDB connection. */
  async close(db) {
    await this.sqlite3.close(db);
    if (this.kind === 'ahp' || this.kind === 'idb') await this.dropVfs();
  }

  /** Unregisters the VFS (so that reopen builds a new one that reads storage afresh). */
  async dropVfs() {
    const vfs = this.vfs;
    if (!vfs) return;
    this.vfs = null;
    const p = this.module.ccall('sqlite3_vfs_find', 'number', ['string'], [vfs.name]);
    if (p) this.module._sqlite3_vfs_unregister(p);
    if (this.kind === 'coopsync') {
      // Close its access handles and free its `.ahp-` directory's lock (public fields of
      // OPFSCoopSyncVFS; otherwise only garbage collection would release them).
      for (const h of vfs.unboundAccessHandles ?? []) try { h.close(); } catch { /* closed */ }
      for (const h of vfs.boundAccessHandles?.values() ?? []) try { h.close(); } catch { /* closed */ }
      vfs.releaser?.();
    } else {
      await vfs.close();
    }
  }

  async cleanup() {
    await this.dropVfs();
    if (this.kind === 'coopsync' || this.kind === 'ahp') await removeOpfsPath(this.dir);
    if (this.kind === 'coopsync') await removeFreeAhpDirs();
    if (this.kind === 'idb') await deleteIdb(this.idbName);
    if (this.kind !== 'memory' && this.kind !== 'idb') await removePeersDirIfEmpty();
    this.module = null;
    this.sqlite3 = null;
  }
}

// ----------------------------------------------------------------------------------------
// PGlite (@electric-sql/pglite)
// ----------------------------------------------------------------------------------------

let pgliteAssetsPromise = null;

/** The library and its compiled wasm and file-system bundle, fetched once per worker. */
function loadPgliteAssets() {
  if (!pgliteAssetsPromise) {
    pgliteAssetsPromise = (async () => {
      const url = (f) => new URL(`${PGLITE}/${f}`, import.meta.url);
      const compile = async (f) => {
        const res = await fetch(url(f));
        if (!res.ok) throw new Error(`${f}: HTTP ${res.status}`);
        return WebAssembly.compile(await res.arrayBuffer());
      };
      const bundle = async () => {
        const res = await fetch(url('pglite.data'));
        if (!res.ok) throw new Error(`pglite.data: HTTP ${res.status}`);
        return res.blob();
      };
      const [lib, pgliteWasmModule, initdbWasmModule, fsBundle] = await Promise.all([
        import(`${PGLITE}/index.js`), compile('pglite.wasm'), compile('initdb.wasm'), bundle(),
      ]);
      return { lib, pgliteWasmModule, initdbWasmModule, fsBundle };
    })();
    pgliteAssetsPromise.catch(() => { pgliteAssetsPromise = null; });
  }
  return pgliteAssetsPromise;
}

class PgliteDriver {
  constructor(kind) {
    this.kind = kind; // 'memory' | 'idb' | 'opfs-ahp'
    this.idbName = `${OPFS_DIR}-pglite-idb`;
    this.dir = `${OPFS_DIR}/pglite-opfs-ahp`;
  }

  async load() {
    this.assets = await loadPgliteAssets();
  }

  dataDir() {
    if (this.kind === 'memory') return 'memory://';
    if (this.kind === 'idb') return `idb://${this.idbName}`;
    return `opfs-ahp://${this.dir}`;
  }

  /**
   * IndexedDB names of this backend: Emscripten's IDBFS names the database by its mount point,
   * `/pglite/<dataDir>` (seen in both browsers by the harness's storage check).
   */
  idbNames() {
    return this.kind === 'idb' ? [`/pglite/${this.idbName}`] : [];
  }

  async prepare() {
    if (this.kind === 'opfs-ahp') await removeOpfsPath(this.dir);
    for (const n of this.idbNames()) await deleteIdb(n);
  }

  async open() {
    const { lib, pgliteWasmModule, initdbWasmModule, fsBundle } = this.assets;
    return lib.PGlite.create(this.dataDir(), {
      relaxedDurability: false,
      pgliteWasmModule,
      initdbWasmModule,
      fsBundle,
    });
  }

  async exec(pg, sql) {
    await pg.exec(sql);
  }

  /**
   * The closest equivalent of one prepared statement run for every row, inside one
   * transaction: `BEGIN` (exec), then the extended query protocol — Parse once into a named
   * statement, then Bind + Execute + Sync per row (each a PGlite execProtocol call, without the
   * per-call storage sync) — then `COMMIT` (exec, which syncs the storage). Parameters are sent
   * as text; their types come from the table (int4, int4, varchar).
   */
  async batch(pg, batch) {
    const { serialize } = this.assets.lib.protocol;
    const join = (...parts) => {
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) { out.set(p, at); at += p.length; }
      return out;
    };
    const name = 'peer_batch_insert';
    const text = pgInsertSql(batch.insert_sql);
    await pg.exec('BEGIN');
    try {
      await pg.execProtocol(join(serialize.parse({ name, text, types: [] }), serialize.sync()), { syncToFs: false });
      for (const row of batch.rows) {
        await pg.execProtocol(join(
          serialize.bind({ statement: name, values: row.map(String) }),
          serialize.execute({}),
          serialize.sync(),
        ), { syncToFs: false });
      }
      await pg.execProtocol(join(serialize.close({ type: 'S', name }), serialize.sync()), { syncToFs: false });
    } catch (e) {
      try { await pg.exec('ROLLBACK'); } catch { /* keep the first error */ }
      throw e;
    }
    await pg.exec('COMMIT');
  }

  async query(pg, sql) {
    const res = await pg.query(sql, [], { rowMode: 'array' });
    return res.rows;
  }

  /** relaxedDurability:false already awaited a sync after each exec; syncToFs is then a no-op. */
  async sync(pg) {
    await pg.syncToFs();
  }

  async close(pg) {
    await pg.close();
  }

  async cleanup() {
    if (this.kind === 'opfs-ahp') await removeOpfsPath(this.dir);
    for (const n of this.idbNames()) await deleteIdb(n);
    if (this.kind === 'opfs-ahp') await removePeersDirIfEmpty();
  }
}

/** `INSERT INTO batch VALUES(?1, ?2, ?3)` → `… VALUES($1, $2, $3)` (Postgres placeholders). */
function pgInsertSql(sql) {
  return sql.replace(/\?(\d+)/g, '$$$1');
}

// ----------------------------------------------------------------------------------------
// Verification after reopen
// ----------------------------------------------------------------------------------------

async function verifySuite(b, driver, conn) {
  const list = SUITE_OBJECTS.map((n) => `'${n}'`).join(',');
  if (b.engine === 'sqlite') {
    const left = await driver.query(conn, `SELECT name FROM sqlite_schema WHERE name IN (${list})`);
    if (left.length) throw new Error(`verification failed: after reopen these dropped tables/indexes still exist: ${left.map((r) => r[0]).join(', ')}`);
    await sqliteIntegrity(driver, conn);
  } else {
    const left = await driver.query(conn,
      `SELECT relname FROM pg_class JOIN pg_namespace ON pg_namespace.oid = relnamespace WHERE nspname = 'public' AND relname IN (${list})`);
    if (left.length) throw new Error(`verification failed: after reopen these dropped tables/indexes still exist: ${left.map((r) => r[0]).join(', ')}`);
  }
}

async function sqliteIntegrity(driver, conn) {
  const rows = await driver.query(conn, 'PRAGMA integrity_check');
  if (rows.length !== 1 || rows[0][0] !== 'ok') {
    throw new Error(`verification failed: integrity_check: ${JSON.stringify(rows)}`);
  }
}

/** Expected (count, sum a, sum b, total length of c), from the rows and `batch.expected`. */
function batchExpectation(batch) {
  let sumA = 0n;
  let sumB = 0n;
  let lenC = 0n;
  const enc = new TextEncoder();
  for (const [a, b, c] of batch.rows) {
    sumA += BigInt(a);
    sumB += BigInt(b);
    lenC += BigInt(enc.encode(String(c)).length);
  }
  const want = { count: BigInt(batch.rows.length), sum_a: sumA, sum_b: sumB, len_c: lenC };
  const e = batch.expected;
  if (e) {
    for (const k of ['count', 'sum_a', 'sum_b']) {
      if (e[k] !== undefined && BigInt(e[k]) !== want[k]) {
        throw new Error(`batch: expected.${k} = ${e[k]} but the rows give ${want[k]}`);
      }
    }
  }
  return want;
}

async function verifyBatch(b, driver, conn, want) {
  const table = batchTable(want.create_sql);
  const sql = b.engine === 'sqlite'
    ? `SELECT count(*), coalesce(sum(a), 0), coalesce(sum(b), 0), coalesce(sum(length(CAST(c AS BLOB))), 0) FROM ${table}`
    : `SELECT count(*)::text, coalesce(sum(a), 0)::text, coalesce(sum(b), 0)::text, coalesce(sum(octet_length(c)), 0)::text FROM ${table}`;
  const [row] = await driver.query(conn, sql);
  const got = row.map((v) => BigInt(v));
  const exp = [want.count, want.sum_a, want.sum_b, want.len_c];
  if (got.some((v, i) => v !== exp[i])) {
    throw new Error(`verification failed: batch after reopen: (rows, sum a, sum b, total length c) = (${got.join(', ')}), expected (${exp.join(', ')})`);
  }
  if (b.engine === 'sqlite') await sqliteIntegrity(driver, conn);
}

/** The table named by `CREATE TABLE name(…)`. */
function batchTable(createSql) {
  const m = /CREATE\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)/i.exec(createSql);
  if (!m) throw new Error(`batch: cannot find the table name in ${JSON.stringify(createSql)}`);
  return m[1];
}

// ----------------------------------------------------------------------------------------
// The runner
// ----------------------------------------------------------------------------------------

function emptyPhases() {
  return { prepare_ms: 0, init_ms: 0, sync_ms: null, close_ms: 0, reopen_ms: null, verify_ms: null };
}

/**
 * prepare → open → workload → sync → close → reopen → verify → close, then cleanup (always).
 * `workload(conn)` runs the timed part. The first error wins; cleanup's error is reported only
 * if nothing failed before it.
 */
async function lifecycle(b, options, workload, verify) {
  const driver = b.make();
  const progress = (phase, extra = {}) => {
    try { options?.onProgress?.({ backend: b.name, phase, ...extra }); } catch { /* caller's bug */ }
  };
  const phases = emptyPhases();
  let conn = null;
  let failure = null;
  let out;
  let phase = 'load';
  const step = async (name, f) => {
    phase = name;
    progress(name);
    const t = now();
    const v = await f();
    return [v, now() - t];
  };
  let engineLoadMs = null;
  try {
    [, engineLoadMs] = await step('load', () => driver.load());
    [, phases.prepare_ms] = await step('prepare', () => driver.prepare());
    [conn, phases.init_ms] = await step('open', () => driver.open());
    phase = 'workload';
    out = await workload(driver, conn, progress);
    if (b.persistent) [, phases.sync_ms] = await step('sync', () => driver.sync(conn));
    if (options?.afterWorkload) {
      phase = 'afterWorkload hook';
      await options.afterWorkload();
    }
    const c = conn;
    conn = null;
    [, phases.close_ms] = await step('close', () => driver.close(c));
    if (b.persistent) {
      [conn, phases.reopen_ms] = await step('reopen', () => driver.open());
      [, phases.verify_ms] = await step('verify', () => verify(driver, conn));
      const c2 = conn;
      conn = null;
      phase = 'close after verify';
      await driver.close(c2);
    }
  } catch (e) {
    failure = new Error(`${b.name}: ${phase}: ${errorText(e)}`, { cause: e });
  }
  if (conn) {
    try { await driver.close(conn); } catch { /* reported through the first error */ }
  }
  try {
    await driver.cleanup();
  } catch (e) {
    failure ??= new Error(`${b.name}: cleanup: ${errorText(e)}`, { cause: e });
  }
  if (failure) throw failure;
  progress('done');
  return { phases, engine_load_ms: engineLoadMs, out };
}

/**
 * Runs the suite once from a wiped state.
 * @param {string} name a backend name from peerBackends()
 * @param {{number: number, title: string, sql: string}[]} cases the generated cases, in order
 * @param {{onProgress?: (event: object) => void, afterWorkload?: () => Promise<void>}} [options]
 *   onProgress: called (synchronously) as each phase and case starts;
 *   afterWorkload: awaited after the workload and sync, before close, in no timed phase (the
 *   harness lists the storage there).
 */
export async function runPeerSuite(name, cases, options = {}) {
  const b = backendNamed(name);
  if (!Array.isArray(cases) || cases.length === 0) throw new Error(`${name}: no cases given`);
  const adapted = adaptSql(b.engine, cases);
  const [sqlSha, adaptedSha] = await Promise.all([sqlSha256(cases), sqlSha256(adapted)]);
  const { phases, engine_load_ms, out } = await lifecycle(b, options,
    async (driver, conn, progress) => {
      const samples = [];
      for (const c of adapted) {
        progress('case', { case: c.number });
        const t = now();
        try {
          await driver.exec(conn, c.sql);
        } catch (e) {
          throw new Error(`case ${c.number}${c.title ? ` (${c.title})` : ''}: ${errorText(e)}`);
        }
        samples.push({ number: c.number, ms: now() - t });
      }
      return samples;
    },
    (driver, conn) => verifySuite(b, driver, conn));
  return {
    backend: b.name,
    phases,
    cases: out,
    total_ms: out.reduce((s, c) => s + c.ms, 0),
    test1_ms: out.find((c) => c.number === 1)?.ms ?? 0,
    sql_sha256: sqlSha,
    adapted_sha256: adaptedSha,
    engine_load_ms,
  };
}

/**
 * Runs the batch once from a wiped state: create the table (untimed), then ONE timed
 * transaction inserting every row through one prepared statement.
 * @param {string} name
 * @param {{create_sql: string, insert_sql: string, rows: Array<[number, number, string]>,
 *          expected?: {count: number, sum_a: number, sum_b: number}}} batch
 * @param {{onProgress?: (event: object) => void, afterWorkload?: () => Promise<void>}} [options]
 *   as for runPeerSuite.
 */
export async function runPeerBatch(name, batch, options = {}) {
  const b = backendNamed(name);
  if (!batch || !Array.isArray(batch.rows)) throw new Error(`${name}: batch.rows missing`);
  const want = { ...batchExpectation(batch), create_sql: batch.create_sql };
  const { phases, engine_load_ms, out } = await lifecycle(b, options,
    async (driver, conn, progress) => {
      await driver.exec(conn, batch.create_sql);
      progress('batch', { rows: batch.rows.length });
      const t = now();
      await driver.batch(conn, batch);
      return now() - t;
    },
    (driver, conn) => verifyBatch(b, driver, conn, want));
  return { backend: b.name, phases, rows: batch.rows.length, ms: out, engine_load_ms };
}

// ----------------------------------------------------------------------------------------
// The multi-tab hand-off suite (issue 13): wa-sqlite's OPFSCoopSyncVFS beside ours
// ----------------------------------------------------------------------------------------
//
// The same protocol as bench-sql/src/handoff.rs (the Rust side calls runPeerHandoff as one
// more part of each of its rounds): two connections to one database in one OPFS directory
// alternate single-row autocommit INSERTs (`two-writers`), or an INSERT and a count that must
// equal the rows committed so far (`writer-reader`), every statement after a hand-off; then the
// same statements on the connection that holds the database (the solo loop). Same table, same
// pragmas (journal_mode=DELETE, synchronous=FULL), same N. Each loop is timed with one pair of
// performance.now() readings; each statement also with its own (spans_ms `statement`,
// `solo-statement`). A hand-off is counted, not assumed: the taker did not hold the database's
// access handles before its statement and holds them after (and the other connection does not).

const HANDOFF_TABLE = 'CREATE TABLE t(id INTEGER PRIMARY KEY, who INTEGER, v INTEGER)';

/**
 * Why two wa-sqlite module instances (two WebAssembly memories, two SQLite libraries), each
 * with its own OPFSCoopSyncVFS and one connection, and not two connections on one VFS: one
 * OPFSCoopSyncVFS instance keeps one PersistentFile (one access handle, one lock releaser) per
 * path for all its connections, so two connections on it share the handles and never hand
 * anything over; and wa-sqlite retries a statement after awaiting every pending retry operation
 * of its module (Module.retryOps), so two VFSes in one module would await each other's
 * acquisitions. Two modules are two tabs' worth of state, in one worker (like our two
 * installs: no process boundary is crossed).
 */
const COOP_CONNECTIONS = 'two wa-sqlite module instances (two WebAssembly memories and SQLite libraries) in this worker, each with its own OPFSCoopSyncVFS and one connection to one database file; a taker\'s xLock returns SQLITE_BUSY and starts an async acquire (a BroadcastChannel message to the holder, the Web Lock ahp:<path>, createSyncAccessHandle on the database, -journal and -wal files), wa-sqlite awaits it and retries the statement; the idle holder closes its three handles and releases the lock from its channel message handler';

const HANDOFF_BACKENDS = [
  {
    name: 'wasqlite-opfs-coopsync', lib: 'wasqlite', needs: ['opfs-sync', 'web-locks', 'broadcast-channel'],
    durability: `${SQLITE_DURABLE}: every commit flush()es the journal's and the database's access handles before it returns (OPFSCoopSyncVFS xSync = flush()); the hand-over flushes nothing (nothing is pending)`,
    connections: COOP_CONNECTIONS,
  },
];

/** The peers of the hand-off suite with their availability here (nothing is loaded). */
export async function peerHandoffBackends() {
  return HANDOFF_BACKENDS.map((b) => describe(b, HANDOFF_FIELDS));
}

function handoffBackendNamed(name) {
  return named(HANDOFF_BACKENDS, HANDOFF_FIELDS, 'hand-off peer', name);
}

/** Loads the engine and the VFS module once (untimed; a failure means the peer is skipped). */
export async function loadPeerHandoff(name) {
  handoffBackendNamed(name);
  try {
    await loadWaSqlite(false);
    await import(`${WA}/src/examples/OPFSCoopSyncVFS.js`);
  } catch (e) {
    throw new Error(`${name}: load: ${errorText(e)}`, { cause: e });
  }
}

/** One "tab": a wa-sqlite module, its OPFSCoopSyncVFS and one connection to `path`. */
class CoopTab {
  constructor(path, vfsName) {
    this.path = path;
    this.vfsName = vfsName;
    this.db = null;
    this.vfs = null;
  }

  async open() {
    const w = await loadWaSqlite(false);
    this.module = w.module;
    this.sqlite3 = w.sqlite3;
    const { OPFSCoopSyncVFS } = await import(`${WA}/src/examples/OPFSCoopSyncVFS.js`);
    this.vfs = await OPFSCoopSyncVFS.create(this.vfsName, this.module);
    this.sqlite3.vfs_register(this.vfs, false);
    this.db = await this.sqlite3.open_v2(this.path, undefined, this.vfs.name);
    await this.sqlite3.exec(this.db, SQLITE_PRAGMAS);
  }

  /** Holds the database's access handles (and its Web Lock). */
  holds() {
    return !!this.vfs?.persistentFiles.get(this.path)?.handleLockReleaser;
  }

  async exec(sql) {
    await this.sqlite3.exec(this.db, sql);
  }

  async count() {
    let n = null;
    await this.sqlite3.exec(this.db, 'SELECT count(*) FROM t', (row) => { n = Number(row[0]); });
    return n;
  }

  /** Closes the connection (releasing the handles if held), then the VFS's handles and lock. */
  async close() {
    if (this.db !== null) {
      const db = this.db;
      this.db = null;
      await this.sqlite3.close(db);
    }
    const vfs = this.vfs;
    if (!vfs) return;
    this.vfs = null;
    const p = this.module.ccall('sqlite3_vfs_find', 'number', ['string'], [vfs.name]);
    if (p) this.module._sqlite3_vfs_unregister(p);
    // Public fields of OPFSCoopSyncVFS (as WaSqliteDriver.dropVfs): the temporary files'
    // handles, any database handle still open, the channels, the `.ahp-` directory's lock.
    for (const h of vfs.unboundAccessHandles ?? []) try { h.close(); } catch { /* closed */ }
    for (const h of vfs.boundAccessHandles?.values() ?? []) try { h.close(); } catch { /* closed */ }
    for (const pf of vfs.persistentFiles?.values() ?? []) {
      try { pf.accessHandle?.close(); } catch { /* closed */ }
      pf.handleLockReleaser?.();
      pf.handleRequestChannel?.close();
    }
    vfs.releaser?.();
  }
}

/**
 * Runs the peer's part of one round of the hand-off suite, from a wiped directory to a wiped
 * directory (setup and cleanup untimed).
 * @param {{backend: string, round: number, handoffs: number, workloads: string[]}} options
 *   workloads: 'two-writers' and/or 'writer-reader', in the order to run them.
 * @returns {Promise<{backend: string, workloads: object[]}>} one HandoffRun-shaped object per
 *   workload (bench_results::handoff::HandoffRun; calls and bytes are not counted: 0).
 */
export async function runPeerHandoff(options) {
  const name = options?.backend;
  const b = handoffBackendNamed(name);
  const n = options.handoffs;
  if (!Number.isInteger(n) || n < 2) throw new Error(`${name}: at least 2 hand-offs per workload, not ${n}`);
  const base = `${OPFS_DIR}/${b.name}-handoff`;
  const path = `/${base}/r${options.round}/handoff.db`;
  const tag = uniqueTag();
  const tabs = [new CoopTab(path, `peers-handoff-${tag}-a`), new CoopTab(path, `peers-handoff-${tag}-b`)];
  let rows = 0;
  const holder = () => (tabs[0].holds() ? 0 : 1);

  /**
   * Statement `op` on connection k; true if k had to acquire the database for it (counted,
   * not assumed). Two holders at once fail the run. A connection that no longer holds after
   * its own statement is not an error: OPFSCoopSyncVFS re-posts its request every second until
   * its lock is granted, and a copy that arrives late makes the next holder release after one
   * statement (seen under load in CI); that is the peer's behaviour, timed as it is and
   * counted in `unrequested_releases` when a statement finds nobody holding.
   */
  const step = async (k, op, run, span) => {
    const held = tabs[k].holds();
    if (!held && !tabs[1 - k].holds()) run.unrequested_releases += 1;
    const t = now();
    if (op === 'insert') {
      await tabs[k].exec(`INSERT INTO t(who, v) VALUES (${k}, ${rows})`);
      rows += 1;
    } else {
      const got = await tabs[k].count();
      if (got !== rows && run) {
        run.mismatches += 1;
        run.first_mismatch ??= `read ${got} rows after ${rows} were committed`;
      }
    }
    const ms = now() - t;
    if (span) run.spans_ms[span].push(ms);
    if (tabs[1 - k].holds()) {
      throw new Error(`connection ${k} ran a statement, but the other holds the database (this one: ${tabs[k].holds()})`);
    }
    return !held;
  };

  const workload = async (wl) => {
    const run = {
      workload: wl, handoffs: 0, alternating_ms: 0, solo_ms: 0,
      spans_ms: { statement: [], 'solo-statement': [] },
      calls: 0, bytes_read: 0, bytes_written: 0, catch_up_log_bytes: 0, catch_up_commits: 0, reloads: 0,
      mismatches: 0, first_mismatch: null, unrequested_releases: 0,
    };
    let plan;
    if (wl === 'writer-reader') {
      // The reader (1) is given the database first, so that the writer's first INSERT
      // follows a hand-off too.
      if (!tabs[1].holds()) await step(1, 'count', run, null);
      run.unrequested_releases = 0; // counted from the timed loops only
      plan = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? [0, 'insert'] : [1, 'count']));
    } else if (wl === 'two-writers') {
      const first = 1 - holder();
      plan = Array.from({ length: n }, (_, i) => [(first + i) % 2, 'insert']);
    } else {
      throw new Error(`unknown workload ${JSON.stringify(wl)}`);
    }
    let t = now();
    for (const [k, op] of plan) {
      if (await step(k, op, run, 'statement')) run.handoffs += 1;
    }
    run.alternating_ms = now() - t;
    if (run.handoffs !== n) throw new Error(`${run.handoffs} hand-offs in a loop of ${n} statements that each needed one`);
    const k = holder();
    t = now();
    for (const [, op] of plan) {
      // An acquisition here can only follow an unrequested release (the other connection
      // runs nothing in this loop, and `step` fails if it ever holds): counted there.
      await step(k, op, run, 'solo-statement');
    }
    run.solo_ms = now() - t;
    if (run.first_mismatch === null) delete run.first_mismatch;
    return run;
  };

  let phase = 'prepare';
  let failure = null;
  const out = [];
  try {
    await removeOpfsPath(base);
    await removeFreeAhpDirs();
    phase = 'open';
    await tabs[0].open();
    phase = 'create';
    await tabs[0].exec(HANDOFF_TABLE);
    phase = 'open (second connection)';
    await tabs[1].open(); // its first statement takes the database from the first connection
    for (const wl of options.workloads ?? []) {
      phase = wl;
      out.push(await workload(wl));
    }
  } catch (e) {
    failure = new Error(`${name}: ${phase}: ${errorText(e)}`, { cause: e });
  }
  // Not holding first: its close only closes its own handles and channel.
  for (const k of tabs[0].holds() ? [1, 0] : [0, 1]) {
    try {
      await tabs[k].close();
    } catch (e) {
      failure ??= new Error(`${name}: close: ${errorText(e)}`, { cause: e });
    }
  }
  try {
    await removeOpfsPath(base);
    await removeFreeAhpDirs();
    await removePeersDirIfEmpty();
  } catch (e) {
    failure ??= new Error(`${name}: cleanup: ${errorText(e)}`, { cause: e });
  }
  if (failure) throw failure;
  return { backend: name, workloads: out };
}
