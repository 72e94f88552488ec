// The template's dedicated worker. It loads the wasm module (src/lib.rs), opens the notes
// database on OPFS and answers the page's requests.
//
// Protocol (structured-clone messages):
//   page -> worker   { id, op, arg }        op: list | add | addMany | remove | stats |
//                                                 compileOptions | integrityCheck | export
//   worker -> page   { id, ok: true, result } or { id, ok: false, error: { name, message } }
//   worker -> page   { event: "ready" } once the database is open, or
//                    { event: "failed", error: { name, message } }  (name "VolumeBusy": another
//                    tab did not hand the notes over in time; "Unsupported": no OPFS here)
import init, { NotesDb } from "./pkg/notes_app.js";

// The OPFS directory holding the volume (one per app; every tab's worker installs it, and they
// take turns).
const DIRECTORY = "notes-app";

// The durability the page asked for (its own ?durability= passed on in this worker's URL):
// strict (default), relaxed or balanced.
const DURABILITY = new URL(self.location.href).searchParams.get("durability") ?? undefined;
// An optional budget in bytes for the volume's files (?space_limit=, passed on the same way).
const SPACE_LIMIT = new URL(self.location.href).searchParams.get("space_limit") ?? undefined;
// The buffer mode (?buffer_mode=memory|disk, passed on the same way; default memory).
const BUFFER_MODE = new URL(self.location.href).searchParams.get("buffer_mode") ?? undefined;

// Start loading at once and listen before the first await: a request that arrives while the
// wasm loads waits for `ready` instead of being lost.
const ready = (async () => {
  await init();
  return NotesDb.open(DIRECTORY, DURABILITY, SPACE_LIMIT, BUFFER_MODE);
})();
ready.then(
  () => postMessage({ event: "ready" }),
  (e) => postMessage({ event: "failed", error: describe(e) }),
);

function describe(e) {
  return { name: e?.name ?? "Error", message: String(e?.message ?? e) };
}

const ops = {
  list: (db) => db.list(),
  add: (db, text) => db.add(String(text)),
  addMany: (db, texts) => db.addMany(Array.from(texts, String)), // one transaction
  remove: (db, id) => db.remove(Number(id)),
  stats: (db) => db.stats(),
  compileOptions: (db) => db.compileOptions(),
  integrityCheck: (db) => db.integrityCheck(), // ["ok"] when the database is sound
  export: (db) => db.export(), // a Uint8Array
};

onmessage = async ({ data: { id, op, arg } }) => {
  try {
    const db = await ready;
    const run = ops[op];
    if (!run) {
      throw Object.assign(new Error(`unknown request: ${op}`), { name: "BadArgument" });
    }
    // Every request waits for this worker's turn on the shared volume (the Rust side does).
    postMessage({ id, ok: true, result: await run(db, arg) });
  } catch (e) {
    postMessage({ id, ok: false, error: describe(e) });
  }
};
