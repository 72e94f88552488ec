//! Child processes: the page server and the WebDriver drivers.
//!
//! Each child runs in its own process group, and [`ChildGuard`] ends the whole group when it
//! is dropped (SIGTERM, then SIGKILL after a grace period): a driver's browser, or the serve
//! binary started by `cargo run`, never outlives the runner, whether it returns, fails or
//! panics.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::options::{Browser, PageSource, Tools};
use crate::{Context as _, Error, Result};

/// A running child process (and its process group), ended on drop.
#[derive(Debug)]
pub struct ChildGuard {
    name: String,
    child: Child,
    log: Option<PathBuf>,
}

impl ChildGuard {
    /// Spawns `cmd` as the leader of a new process group. Its stderr goes to `log` when given
    /// (its stdout is the caller's to set: see [`ChildGuard::spawn_logging_all`]).
    pub fn spawn(name: &str, cmd: &mut Command, log: Option<&Path>) -> Result<Self> {
        if let Some(log) = log {
            let f = File::create(log).context(format!("creating {}", log.display()))?;
            cmd.stderr(f);
        }
        Self::spawn_leader(name, cmd, log)
    }

    /// As [`ChildGuard::spawn`], with stdout and stderr both going to `log`, through one open
    /// file description: the two streams share its offset and interleave. (Two `File::create`s
    /// of the same path each wrote from offset 0 over the other: a driver's own lines were
    /// overwritten by its browser's, and a failed start could leave an empty log.)
    pub fn spawn_logging_all(name: &str, cmd: &mut Command, log: &Path) -> Result<Self> {
        let f = File::create(log).context(format!("creating {}", log.display()))?;
        let g = f
            .try_clone()
            .context(format!("creating {}", log.display()))?;
        cmd.stdout(f).stderr(g);
        Self::spawn_leader(name, cmd, Some(log))
    }

    fn spawn_leader(name: &str, cmd: &mut Command, log: Option<&Path>) -> Result<Self> {
        cmd.stdin(Stdio::null()).process_group(0);
        let child = cmd.spawn().context(format!(
            "starting {name} ({})",
            cmd.get_program().to_string_lossy()
        ))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            log: log.map(Path::to_path_buf),
        })
    }

    /// The process id (also the process group id).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// `Err` with the exit status (and the log's tail) if the process has exited.
    pub fn check_running(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(Error(format!(
                "{} exited early ({status}){}",
                self.name,
                self.log_tail()
            ))),
            Err(e) => Err(Error(format!("{}: {e}", self.name))),
        }
    }

    /// The last lines of the log, formatted for an error message (empty without a log).
    pub fn log_tail(&self) -> String {
        let Some(log) = &self.log else {
            return String::new();
        };
        let mut text = String::new();
        if File::open(log)
            .and_then(|mut f| f.read_to_string(&mut text))
            .is_err()
        {
            return String::new();
        }
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n    ");
        format!("\n  log {}:\n    {tail}", log.display())
    }

    /// The log file, if any.
    pub fn log(&self) -> Option<&Path> {
        self.log.as_deref()
    }

    fn signal_group(&self, signal: libc::c_int) {
        let Ok(pgid) = libc::pid_t::try_from(self.child.id()) else {
            return;
        };
        // Safety: kill(2) with a negative pid signals that process group; it has no memory
        // effects on this process. The group is the one `spawn` created for this child
        // (process_group(0) makes the child's pid its group id), so only our own processes
        // are signalled.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            // The leader is gone; anything left in its group still gets the signal.
            self.signal_group(libc::SIGKILL);
            return;
        }
        self.signal_group(libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.signal_group(libc::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A free TCP port on 127.0.0.1 (bound and released: another process could take it before
/// it is used, which then shows up as a startup error).
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("finding a free port")?;
    Ok(l.local_addr().context("finding a free port")?.port())
}

/// Waits until something accepts connections on 127.0.0.1:`port`, or `child` exits, or
/// `timeout` passes.
pub fn wait_for_port(port: u16, child: &mut ChildGuard, timeout: Duration) -> Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + timeout;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        child.check_running()?;
        if Instant::now() >= deadline {
            return Err(Error(format!(
                "{} did not listen on port {port} within {} s{}",
                child.name,
                timeout.as_secs(),
                child.log_tail()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The page, served.
#[derive(Debug)]
pub struct Server {
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
    /// The server process, when this runner started it.
    pub guard: Option<ChildGuard>,
}

/// Starts serving the page (or uses the given URL), waiting up to `timeout` for its address
/// (`cargo run` may have to build first).
pub fn start_serve(source: &PageSource, root: &Path, log_dir: &Path) -> Result<Server> {
    let (bin, dir) = match source {
        PageSource::Url(u) => {
            let url = if u.ends_with('/') {
                u.clone()
            } else {
                format!("{u}/")
            };
            return Ok(Server { url, guard: None });
        }
        PageSource::Serve { bin, dir } => (bin, dir),
    };
    if !dir.join("index.html").is_file() {
        return Err(Error(format!(
            "the page is not built: {} has no index.html (run `bash web/build.sh`)",
            dir.display()
        )));
    }
    let (mut cmd, timeout) = match bin {
        Some(b) => (Command::new(b), Duration::from_secs(30)),
        None => {
            let mut c = Command::new("cargo");
            c.args(["run", "--release", "-p", "web", "--bin", "serve", "--"]);
            // Building the server may take minutes on a cold cache.
            (c, Duration::from_secs(900))
        }
    };
    cmd.arg("--dir")
        .arg(dir)
        .args(["--port", "0"])
        .current_dir(root)
        .stdout(Stdio::piped());
    let log = log_dir.join("serve.log");
    let mut guard = ChildGuard::spawn("serve", &mut cmd, Some(&log))?;
    let stdout = guard
        .child
        .stdout
        .take()
        .ok_or_else(|| Error::from("serve: no stdout"))?;
    // The first line is the address; later lines (if any) are drained so the server never
    // blocks on a full pipe.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(first)) = lines.next() {
            let _ = tx.send(first);
        }
        for _ in lines {}
    });
    let deadline = Instant::now() + timeout;
    let first = loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => break line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                guard.check_running()?;
                if Instant::now() >= deadline {
                    return Err(Error(format!(
                        "serve printed no address within {} s{}",
                        timeout.as_secs(),
                        guard.log_tail()
                    )));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(100));
                guard.check_running()?;
                return Err(Error(format!(
                    "serve closed its stdout without an address{}",
                    guard.log_tail()
                )));
            }
        }
    };
    let url = parse_listening(&first).ok_or_else(|| {
        Error(format!(
            "serve's first line is not `listening on http://…`: {first:?}"
        ))
    })?;
    Ok(Server {
        url,
        guard: Some(guard),
    })
}

/// `"listening on http://127.0.0.1:8000/"` → `"http://127.0.0.1:8000/"`.
pub fn parse_listening(line: &str) -> Option<String> {
    let url = line.trim().strip_prefix("listening on ")?.trim();
    if !url.starts_with("http://") {
        return None;
    }
    Some(if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    })
}

/// A running WebDriver driver.
#[derive(Debug)]
pub struct Driver {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The driver process.
    pub guard: ChildGuard,
}

/// Held from choosing a driver's port until the driver listens on it. [`free_port`] releases
/// the port it found, and a second `bind` to port 0 can get the same one: two drivers started
/// at once (the end-to-end tests run both browsers in parallel threads) could be given one
/// port, and the second driver's client would then talk to the first driver (or to none). In
/// one process this lock makes that impossible; another process can still take the port,
/// which [`start_session`](crate::drive::start_session) survives by starting over once.
static DRIVER_PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Starts the driver for `browser` on a free port and waits until it listens.
pub fn start_driver(browser: Browser, tools: &Tools, log_dir: &Path) -> Result<Driver> {
    // A poisoned lock only means another thread panicked while holding it; the port it chose
    // is its own.
    let _ports = DRIVER_PORTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let port = free_port()?;
    let (name, mut cmd) = match browser {
        Browser::Chromium => {
            let mut c = Command::new(&tools.chromedriver);
            c.arg(format!("--port={port}"));
            ("chromedriver", c)
        }
        Browser::Firefox => {
            let mut c = Command::new(&tools.geckodriver);
            // Marionette port 0: Firefox picks a free one (several runs may overlap).
            c.args(["--port", &port.to_string(), "--marionette-port", "0"]);
            ("geckodriver", c)
        }
    };
    let log = log_dir.join(format!("{name}.log"));
    let mut guard = ChildGuard::spawn_logging_all(name, &mut cmd, &log)?;
    wait_for_port(port, &mut guard, Duration::from_secs(30))?;
    Ok(Driver {
        url: format!("http://127.0.0.1:{port}"),
        guard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_line() {
        assert_eq!(
            parse_listening("listening on http://127.0.0.1:8000/").as_deref(),
            Some("http://127.0.0.1:8000/")
        );
        assert_eq!(
            parse_listening("listening on http://127.0.0.1:1234\n").as_deref(),
            Some("http://127.0.0.1:1234/")
        );
        assert_eq!(parse_listening("Compiling web"), None);
        assert_eq!(parse_listening("listening on ftp://x"), None);
    }

    #[test]
    fn a_logged_child_keeps_both_streams() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("child.log");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("echo out-one; echo err-one >&2; echo out-two; echo err-two >&2");
        let mut guard = ChildGuard::spawn_logging_all("sh", &mut cmd, &log).unwrap();
        let _ = guard.child.wait();
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text, "out-one\nerr-one\nout-two\nerr-two\n");
    }

    #[test]
    fn guard_ends_the_process_group() {
        // A shell that starts a grandchild: both must be gone after the guard drops.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("sleep 60 & echo $! > {}; wait", pidfile.display()));
        let guard = ChildGuard::spawn("sh", &mut cmd, None).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !pidfile.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let grandchild: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        drop(guard);
        // Gone, or a zombie waiting for whoever inherited it to reap it.
        let alive = || {
            std::fs::read_to_string(format!("/proc/{grandchild}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| !r.trim_start().starts_with('Z'))
            })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(), "grandchild {grandchild} survived the guard");
    }

    #[test]
    fn wait_for_port_sees_exit() {
        // Port 0: nothing can listen there (connecting is refused at once). A "free" port
        // from `free_port` could be taken by another test's server before the connect, and
        // then this test failed (seen once when several crates' tests ran at the same time).
        let port = 0;
        let mut guard = ChildGuard::spawn("true", &mut Command::new("true"), None).unwrap();
        let err = wait_for_port(port, &mut guard, Duration::from_secs(5)).unwrap_err();
        assert!(err.0.contains("exited early"), "{err}");
    }
}
