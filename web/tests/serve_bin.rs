//! The `serve` binary as the runner and the end-to-end tests start it: `--dir D --port 0`, the
//! address read from its first stdout line, then plain HTTP/1.1 requests over a socket. Checks
//! what the page depends on: cross-origin isolation headers on every response (without them
//! `performance.now()` is coarse and SQLite WASM's `opfs` VFS does not load), the MIME types
//! module workers and `instantiateStreaming` insist on, `no-store`, and a typed start-up error
//! for a directory without a page.
//!
//! Having an integration test also makes `cargo test --workspace` build the real `serve`
//! binary (target/debug/serve) with the workspace's test-time features, which the end-to-end
//! gates of scripts/test.sh then run without compiling it again.
#![cfg(not(target_arch = "wasm32"))]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("serve-bin-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The running server, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_serve"))
        .args(["--dir", dir.to_str().expect("utf-8 path"), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("first line {line:?}"))
        .to_owned();
    Server { child, addr }
}

/// One GET: (status, lower-cased headers, body).
fn get(addr: &str, path: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8(raw[..split].to_vec()).expect("ascii headers");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The headers `serve` puts on every response: cross-origin isolation, and no caching.
const EVERY_RESPONSE: [(&str, &str); 4] = [
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-embedder-policy", "require-corp"),
    ("cross-origin-resource-policy", "same-origin"),
    ("cache-control", "no-store"),
];

#[test]
fn serves_the_page_cross_origin_isolated_with_module_mime_types() {
    let dir = Scratch::new("page");
    std::fs::write(dir.0.join("index.html"), "<!doctype html><p>page").unwrap();
    std::fs::write(dir.0.join("worker.js"), "postMessage(1);").unwrap();
    std::fs::create_dir_all(dir.0.join("pkg")).unwrap();
    let wasm = b"\0asm\x01\0\0\0";
    std::fs::write(dir.0.join("pkg/web_bg.wasm"), wasm).unwrap();
    let server = start(&dir.0);

    let cases: [(&str, &str, &[u8]); 3] = [
        ("/", "text/html", b"<!doctype html><p>page"),
        ("/worker.js", "text/javascript", b"postMessage(1);"),
        ("/pkg/web_bg.wasm", "application/wasm", wasm),
    ];
    for (path, mime, body) in cases {
        let (status, headers, got) = get(&server.addr, path);
        assert_eq!(status, 200, "{path}");
        assert_eq!(got, body, "{path}: body");
        let ct = header(&headers, "content-type").unwrap_or_default();
        assert!(
            ct.starts_with(mime),
            "{path}: content-type {ct:?}, want {mime}"
        );
        for (name, value) in EVERY_RESPONSE {
            assert_eq!(header(&headers, name), Some(value), "{path}: {name}");
        }
    }

    // A missing file is a 404 with the same headers, still isolated (the page's probes of
    // optional peers get it).
    let (status, headers, _) = get(&server.addr, "/peers/index.js");
    assert_eq!(status, 404);
    for (name, value) in EVERY_RESPONSE {
        assert_eq!(header(&headers, name), Some(value), "404: {name}");
    }
}

#[test]
fn refuses_a_directory_without_a_page() {
    let dir = Scratch::new("empty");
    let out = Command::new(env!("CARGO_BIN_EXE_serve"))
        .args(["--dir", dir.0.to_str().unwrap(), "--port", "0"])
        .output()
        .expect("run serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no index.html"), "stderr: {err}");
}
