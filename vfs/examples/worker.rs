//! # A web app's worker using rusqlite on the OPFS volume
//!
//! The page starts a dedicated worker; the worker runs this wasm: it installs the VFS once
//! ([`opfs_vfs::web::install`]), opens a rusqlite connection on it and answers the page's messages.
//! The page never touches SQLite or OPFS itself (OPFS sync access handles exist only in
//! dedicated workers; the page stays responsive while SQLite blocks the worker).
//!
//! Build (no bundler needed; COOP/COEP headers are not required):
//! ```sh
//! cargo build --release --target wasm32-unknown-unknown -p opfs-vfs --example worker
//! wasm-bindgen --target web --out-dir www/pkg \
//!     target/wasm32-unknown-unknown/release/examples/worker.wasm
//! ```
//! `www/worker.js`:
//! ```js
//! import init, { Notes } from "./pkg/worker.js";
//! // Listen before the first await: messages that arrive while the wasm loads are not lost.
//! const ready = (async () => {
//!     await init();
//!     const notes = await Notes.open("notes-app");   // the OPFS directory
//!     // Relaxed durability: commits are written at once and flushed at most a second later.
//!     setInterval(() => notes.flush(), 1000);
//!     return notes;
//! })();
//! onmessage = async ({ data }) => {
//!     try {
//!         const notes = await ready;
//!         if (data.add) notes.add(data.add);
//!         if (data.export) postMessage({ file: notes.export() });   // a Uint8Array
//!         postMessage({ notes: notes.list(), usage: await notes.usage() });
//!     } catch (e) {
//!         // e.g. "volume is busy: ... open in another tab or worker", no OPFS, SQLITE_FULL
//!         postMessage({ error: String(e) });
//!     }
//! };
//! ```
//! `www/index.html`:
//! ```html
//! <script type="module">
//!   const worker = new Worker("./worker.js", { type: "module" });
//!   worker.onmessage = ({ data }) => console.log(data);
//!   // Release the volume when the page goes away (reload, navigation, back-forward cache):
//!   // otherwise the next page's worker can find it still held (seen in Firefox).
//!   addEventListener("pagehide", () => worker.terminate());
//!   worker.postMessage({ add: "hello from the page" });
//!   worker.postMessage({ export: true });
//! </script>
//! ```
//! Terminating the worker loses nothing committed: every commit has been written to OPFS by
//! then (`Relaxed`), only the flush may be missing, which matters for power loss, not for a
//! closed page.
//!
//! Checked by hand in headless Chromium 156 and Firefox ESR 153 (served by
//! `python3 -m http.server`, driven over WebDriver): notes persist across reloads, and a second
//! tab gets the busy error while the first is open.
//!
//! Serve `www/` over `https:` or `http://localhost` (OPFS needs a secure context).
//!
//! Natively this example only prints where to look.

#[cfg(target_arch = "wasm32")]
mod app {
    use opfs_vfs::sqlite::rusqlite::{params, Connection, OpenFlags};
    use opfs_vfs::web::{install, InstallOptions, Installed};
    use opfs_vfs::{BufferMode, Durability};
    use wasm_bindgen::prelude::*;

    /// The worker's database: a table of notes in `notes.db` on the OPFS volume.
    #[wasm_bindgen]
    #[derive(Debug)]
    pub struct Notes {
        // Declared before `installed`: the connection must close before the volume does.
        conn: Option<Connection>,
        installed: Installed,
    }

    #[wasm_bindgen]
    impl Notes {
        /// Installs the VFS over OPFS directory `directory` and opens `notes.db`.
        pub async fn open(directory: String) -> Result<Notes, JsError> {
            let installed = install(InstallOptions {
                vfs_name: "notes".into(),
                directory,
                buffer_mode: BufferMode::Memory,
                durability: Durability::Relaxed,
                ..InstallOptions::default()
            })
            .await?;
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
            let conn =
                Connection::open_with_flags_and_vfs("notes.db", flags, installed.vfs_name())?;
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS notes(
                     id INTEGER PRIMARY KEY,
                     text TEXT NOT NULL,
                     created TEXT NOT NULL DEFAULT (datetime('now')));",
            )?;
            Ok(Notes {
                conn: Some(conn),
                installed,
            })
        }

        fn conn(&self) -> Result<&Connection, JsError> {
            self.conn
                .as_ref()
                .ok_or_else(|| JsError::new("the database is closed"))
        }

        /// Adds a note (one autocommit INSERT: one log write, no flush under Relaxed).
        pub fn add(&self, text: &str) -> Result<f64, JsError> {
            let conn = self.conn()?;
            conn.execute("INSERT INTO notes(text) VALUES (?1)", params![text])?;
            // Row ids stay far below 2^53.
            Ok(conn.last_insert_rowid() as f64)
        }

        /// Every note as `[id, text, created]` arrays, newest first.
        pub fn list(&self) -> Result<js_sys::Array, JsError> {
            let conn = self.conn()?;
            let mut stmt = conn.prepare("SELECT id, text, created FROM notes ORDER BY id DESC")?;
            let out = js_sys::Array::new();
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let text: String = row.get(1)?;
                let created: String = row.get(2)?;
                out.push(&js_sys::Array::of3(
                    &JsValue::from_f64(id as f64),
                    &text.into(),
                    &created.into(),
                ));
            }
            Ok(out)
        }

        /// The database file's bytes, e.g. for a download.
        pub fn export(&self) -> Result<Vec<u8>, JsError> {
            Ok(self.installed.export("notes.db")?)
        }

        /// Makes every commit so far durable (call from a timer or on `visibilitychange`).
        pub fn flush(&self) -> Result<(), JsError> {
            Ok(self.installed.flush()?)
        }

        /// `{ usage, quota, files, fileBytes }` in bytes.
        pub async fn usage(&self) -> Result<JsValue, JsError> {
            let u = self.installed.usage().await?;
            let o = js_sys::Object::new();
            let set = |k: &str, v: Option<u64>| {
                let v = v.map_or(JsValue::NULL, |v| JsValue::from_f64(v as f64));
                let _ = js_sys::Reflect::set(&o, &k.into(), &v);
            };
            set("usage", u.origin.usage_bytes);
            set("quota", u.origin.quota_bytes);
            set("files", Some(u.files));
            set("fileBytes", Some(u.file_bytes));
            Ok(o.into())
        }

        /// Closes the connection and the volume (flush, checkpoint, release the OPFS files so
        /// another tab or worker can open them).
        pub fn close(&mut self) -> Result<(), JsError> {
            drop(self.conn.take());
            Ok(self.installed.close()?)
        }
    }
}

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    println!(
        "This example runs in a browser's dedicated worker: build it for \
         wasm32-unknown-unknown (see the comment at the top of vfs/examples/worker.rs)."
    );
}
