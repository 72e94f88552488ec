// The page: UI only. Everything that touches SQLite or OPFS runs in the dedicated worker
// (worker.js); this file sends it requests and renders the answers.
//
// `window.notesApp` is the page's small debug surface (used by the end-to-end test):
//   state     "loading" | "ready" | "busy" | "unsupported" | "error"
//   error     { name, message } of the last failure, or null
//   request(op, arg) -> Promise   any worker request, e.g. request("stats")
//
// `?durability=strict|relaxed|balanced` on the page's URL picks the engine's durability level
// (default strict; see the README for what a crash may lose under each), and
// `?space_limit=<bytes>` an optional budget for the database's files (InstallOptions::space_limit),
// and `?buffer_mode=memory|disk` the engine's buffer mode (default memory). The worker gets them
// in its own URL.
const $ = (selector) => document.querySelector(selector);
const app = (window.notesApp = { state: "loading", error: null, request });
const pageParams = new URLSearchParams(location.search);
const durability = pageParams.get("durability");
const workerParams = new URLSearchParams();
for (const key of ["durability", "space_limit", "buffer_mode"]) {
  if (pageParams.has(key)) workerParams.set(key, pageParams.get(key));
}
const workerUrl = workerParams.size ? `./worker.js?${workerParams}` : "./worker.js";
const risks = {
  relaxed: "written before it is shown, flushed within 0.1 s: a power loss may lose the last notes",
  balanced: "shown first, written and flushed within 0.1 s: a crash may lose the last notes",
};
if (risks[durability]) {
  $(".lead").textContent += ` (durability=${durability} here: each note is ${risks[durability]}.)`;
}

let worker = null;
let nextId = 1;
const pending = new Map(); // request id -> { resolve, reject }

function setState(state, message = "") {
  app.state = state;
  document.body.dataset.state = state;
  $("#status").textContent = message;
  $("#retry").hidden = !(state === "busy" || state === "error");
  for (const el of document.querySelectorAll("#add-form input, #add-form button, #download")) {
    el.disabled = state !== "ready";
  }
}

function start() {
  setState("loading", "Opening the notes…");
  worker = new Worker(workerUrl, { type: "module" });
  worker.onmessage = ({ data }) => {
    if (data.event === "ready") {
      app.error = null;
      setState("ready", "");
      refresh();
    } else if (data.event === "failed") {
      failed(data.error);
    } else {
      const p = pending.get(data.id);
      pending.delete(data.id);
      if (p) data.ok ? p.resolve(data.result) : p.reject(data.error);
    }
  };
  // E.g. pkg/ missing (not built), or a module syntax error.
  worker.onerror = (e) => {
    e.preventDefault();
    failed({ name: "WorkerError", message: e.message || "the worker failed to load" });
  };
}

function failed(error) {
  app.error = error;
  if (error.name === "VolumeBusy") {
    // Tabs take turns on the volume; this only happens if another tab never hands it over
    // (e.g. a page kept in the back-forward cache with its worker still running).
    setState("busy", "Another tab is holding the notes and does not let go. Close it, then press Retry.");
  } else if (error.name === "Unsupported") {
    setState("unsupported", `This browser cannot store the notes here: ${error.message}`);
  } else {
    setState("error", `Something went wrong: ${error.name}: ${error.message}`);
  }
}

function stop() {
  if (worker) worker.terminate();
  worker = null;
  for (const p of pending.values()) p.reject({ name: "Closed", message: "the worker was stopped" });
  pending.clear();
}

function request(op, arg) {
  if (!worker) return Promise.reject({ name: "Closed", message: "no worker" });
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, arg });
  });
}

async function refresh() {
  const notes = await request("list");
  const list = $("#notes");
  list.replaceChildren(
    ...notes.map((note) => {
      const li = document.createElement("li");
      li.dataset.id = String(note.id);
      const text = document.createElement("span");
      text.className = "text";
      text.textContent = note.text;
      const when = document.createElement("time");
      when.textContent = `${note.created} UTC`;
      const del = document.createElement("button");
      del.className = "delete";
      del.type = "button";
      del.textContent = "Delete";
      del.addEventListener("click", () => act(() => request("remove", note.id)));
      li.append(text, when, del);
      return li;
    }),
  );
  $("#count").textContent = `${notes.length} note${notes.length === 1 ? "" : "s"}`;
}

// Every tab shows the same notes: after a change, tell the other tabs of this app to refresh.
const changes = new BroadcastChannel("notes-app-changes");
changes.onmessage = () => {
  if (app.state === "ready") refresh().catch(failed);
};

async function act(change) {
  try {
    await change();
    $("#status").textContent = ""; // clear an earlier action's message
    await refresh();
    changes.postMessage("changed");
  } catch (e) {
    if (e.name === "StorageFull") {
      // The write was rolled back; every saved note is intact and the notes stay usable.
      $("#status").textContent =
        "Storage is full: this note was not saved. Delete some notes (or free space for " +
        "this site in the browser) and try again.";
    } else if (["VolumeError", "VolumeBusy", "Closed", "WorkerError"].includes(e.name)) {
      // The volume refuses further work (I/O error, storage full, ...): Retry reinstalls it,
      // which recovers the last durable commit.
      failed(e);
    } else {
      $("#status").textContent = `${e.name}: ${e.message}`; // e.g. a bad argument; still usable
    }
  }
}

$("#add-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("#note-text");
  const text = input.value.trim();
  if (!text) return;
  act(async () => {
    await request("add", text);
    input.value = "";
  });
});

$("#download").addEventListener("click", () =>
  act(async () => {
    const bytes = await request("export");
    const url = URL.createObjectURL(new Blob([bytes], { type: "application/vnd.sqlite3" }));
    const a = Object.assign(document.createElement("a"), { href: url, download: "notes.db" });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }),
);

$("#retry").addEventListener("click", () => {
  stop();
  start();
});

// Release the OPFS files whenever the page goes away (reload, navigation, closing the tab, or
// entering the back-forward cache). Firefox keeps a bfcached page's worker alive with its
// handles, and the next page's worker would find the volume busy. A page restored from the
// bfcache starts a new worker.
addEventListener("pagehide", stop);
addEventListener("pageshow", (event) => {
  if (event.persisted) start();
});

if (!window.isSecureContext) {
  setState("unsupported", "OPFS needs a secure context: serve this page over https: or from localhost.");
} else {
  start();
}
