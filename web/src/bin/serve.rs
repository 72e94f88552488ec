//! # serve: the benchmark page over HTTP, cross-origin isolated
//!
//! A static file server (axum + tower-http's `ServeDir`) for the built page (`web/dist` by
//! default, see `web/build.sh`), bound to 127.0.0.1 only. Every response carries
//!
//! - `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`,
//!   which make the page and its worker `crossOriginIsolated`: browsers then give
//!   `performance.now()` its fine resolution (5 µs in Chromium instead of 100 µs; 20 µs in
//!   Firefox). OPFS itself does not need them.
//! - `Cross-Origin-Resource-Policy: same-origin` (every resource is ours),
//! - `Cache-Control: no-store` (a rebuilt page is never mixed with a cached `.wasm`),
//! - the MIME types module workers and `WebAssembly.instantiateStreaming` insist on:
//!   `application/wasm` for `.wasm` and `text/javascript` for `.js`/`.mjs`.
//!
//! ```text
//! cargo run --release -p web --bin serve -- [--dir web/dist] [--port 8000]
//! ```
//! `--port 0` picks a free port. The first line on stdout is always
//! `listening on http://127.0.0.1:PORT/`, so a script can read the address from it.
//!
//! `localhost`/`127.0.0.1` is a secure context, which OPFS requires; serving to other machines
//! would need HTTPS and is deliberately not offered.

// The server is native only; on wasm32 (where `cargo clippy --target wasm32-unknown-unknown -p
// web` also checks this target) the binary is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    match server::Args::parse(std::env::args().skip(1)) {
        Ok(server::Parsed::Help) => {
            println!("{}", server::USAGE);
            std::process::ExitCode::SUCCESS
        }
        Ok(server::Parsed::Run(args)) => match server::run(args) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("serve: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("serve: {e}\n\n{}", server::USAGE);
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod server {
    use std::io::Write as _;
    use std::net::{Ipv4Addr, SocketAddr};
    use std::path::PathBuf;

    use axum::body::Body;
    use axum::http::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
    use axum::http::{Request, Response};
    use axum::middleware::{self, Next};
    use axum::Router;
    use tower_http::services::ServeDir;
    use tower_http::set_header::SetResponseHeaderLayer;

    pub const USAGE: &str = "\
usage: serve [--dir DIR] [--port PORT]

Serves DIR (default: web/dist, the output of web/build.sh) on http://127.0.0.1:PORT/
(default port 8000; 0 picks a free one) with COOP/COEP/CORP headers, so the page is
cross-origin isolated. Prints `listening on http://127.0.0.1:PORT/` as its first line.";

    /// Command-line options.
    #[derive(Debug, PartialEq, Eq)]
    pub struct Args {
        /// Directory served as `/`.
        pub dir: PathBuf,
        /// TCP port on 127.0.0.1; 0 = any free port.
        pub port: u16,
    }

    /// What the command line asks for.
    #[derive(Debug, PartialEq, Eq)]
    pub enum Parsed {
        /// Serve.
        Run(Args),
        /// Print usage.
        Help,
    }

    impl Args {
        /// Parses `--dir DIR`, `--port N` (also `--dir=DIR`, `--port=N`) and `-h/--help`.
        pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
            let mut out = Args {
                dir: PathBuf::from("web/dist"),
                port: 8000,
            };
            let mut args = args.into_iter();
            while let Some(arg) = args.next() {
                let (flag, inline) = match arg.split_once('=') {
                    Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                    _ => (arg.clone(), None),
                };
                let mut value = |name: &str| {
                    inline
                        .clone()
                        .or_else(|| args.next())
                        .ok_or_else(|| format!("{name} needs a value"))
                };
                match flag.as_str() {
                    "-h" | "--help" => return Ok(Parsed::Help),
                    "--dir" => out.dir = PathBuf::from(value("--dir")?),
                    "--port" => {
                        let v = value("--port")?;
                        out.port = v
                            .parse()
                            .map_err(|_| format!("--port: not a port number: {v:?}"))?;
                    }
                    other => return Err(format!("unknown argument {other:?}")),
                }
            }
            Ok(Parsed::Run(out))
        }
    }

    /// The MIME type we insist on for `path`, where `ServeDir`'s guess is not good enough
    /// (older `mime_guess` tables say `application/javascript`; a module worker accepts any
    /// JavaScript type, but the page should not depend on that).
    pub fn mime_override(path: &str) -> Option<&'static str> {
        if path.ends_with('/') {
            // A directory: ServeDir answers with its index.html.
            return Some("text/html; charset=utf-8");
        }
        let ext = path.rsplit_once('.')?.1;
        match ext {
            "wasm" => Some("application/wasm"),
            "js" | "mjs" => Some("text/javascript; charset=utf-8"),
            "json" => Some("application/json"),
            "html" => Some("text/html; charset=utf-8"),
            "css" => Some("text/css; charset=utf-8"),
            "svg" => Some("image/svg+xml"),
            _ => None,
        }
    }

    /// Fixes the Content-Type of successful responses by the request path's extension.
    async fn content_type(req: Request<Body>, next: Next) -> Response<Body> {
        let path = req.uri().path().to_owned();
        let mut res = next.run(req).await;
        if res.status().is_success() {
            if let Some(mime) = mime_override(&path) {
                res.headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static(mime));
            }
        }
        res
    }

    /// The router: `dir` as `/` (with `index.html` for directories), plus the headers.
    pub fn app(dir: PathBuf) -> Router {
        let header = |name: &'static str, value: &'static str| {
            SetResponseHeaderLayer::overriding(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            )
        };
        Router::new()
            .fallback_service(ServeDir::new(dir).append_index_html_on_directories(true))
            .layer(middleware::from_fn(content_type))
            .layer(header("cross-origin-opener-policy", "same-origin"))
            .layer(header("cross-origin-embedder-policy", "require-corp"))
            .layer(header("cross-origin-resource-policy", "same-origin"))
            .layer(SetResponseHeaderLayer::overriding(
                CACHE_CONTROL,
                HeaderValue::from_static("no-store"),
            ))
    }

    /// Binds 127.0.0.1:`port`, prints the address, serves until Ctrl-C / SIGTERM.
    pub fn run(args: Args) -> Result<(), String> {
        if !args.dir.join("index.html").is_file() {
            return Err(format!(
                "{} has no index.html: build the page first (bash web/build.sh)",
                args.dir.display()
            ));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("tokio runtime: {e}"))?;
        runtime.block_on(async move {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("bind {addr}: {e}"))?;
            let local = listener
                .local_addr()
                .map_err(|e| format!("local address: {e}"))?;
            // First line on stdout, flushed at once: scripts wait for it.
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "listening on http://{local}/");
            let _ = stdout.flush();
            drop(stdout);
            eprintln!("serving {} (Ctrl-C to stop)", args.dir.display());
            axum::serve(listener, app(args.dir))
                .with_graceful_shutdown(shutdown())
                .await
                .map_err(|e| format!("server: {e}"))
        })
    }

    /// Resolves on Ctrl-C or (Unix) SIGTERM.
    async fn shutdown() {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            () = ctrl_c => {}
            () = term => {}
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn parse(v: &[&str]) -> Result<Parsed, String> {
            Args::parse(v.iter().map(|s| (*s).to_owned()))
        }

        #[test]
        fn parses_flags() {
            assert_eq!(
                parse(&[]).unwrap(),
                Parsed::Run(Args {
                    dir: "web/dist".into(),
                    port: 8000
                })
            );
            assert_eq!(
                parse(&["--dir", "x", "--port=0"]).unwrap(),
                Parsed::Run(Args {
                    dir: "x".into(),
                    port: 0
                })
            );
            assert_eq!(parse(&["--help"]).unwrap(), Parsed::Help);
            assert!(parse(&["--port", "http"]).is_err());
            assert!(parse(&["--port"]).is_err());
            assert!(parse(&["--bogus"]).is_err());
        }

        #[test]
        fn mime_types() {
            assert_eq!(mime_override("/pkg/web_bg.wasm"), Some("application/wasm"));
            assert_eq!(
                mime_override("/worker.js"),
                Some("text/javascript; charset=utf-8")
            );
            assert_eq!(mime_override("/"), Some("text/html; charset=utf-8"));
            assert_eq!(mime_override("/LICENSE"), None);
            assert_eq!(mime_override("/a.png"), None);
        }
    }
}
