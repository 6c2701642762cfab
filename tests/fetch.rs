//! `ant data fetch` against a loopback HTTP server that this test runs itself, serving
//! the real MNIST files shipped in `data/mnist`: download + verification, resume
//! with `Range`, a server that ignores `Range`, and a checksum mismatch.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

mod common;

#[derive(Clone, Default)]
struct Behaviour {
    /// Answer `Range` requests with 206 (else ignore them: 200 and the whole file).
    honour_range: bool,
    /// Close the first response for a name containing this after this many bytes.
    cut: Option<(&'static str, usize)>,
    /// Serve a file with one unpacked byte changed (recompressed, so gzip is valid).
    tamper: Option<&'static str>,
}

/// (path, Range header) of every request.
type Log = Mutex<Vec<(String, Option<String>)>>;

struct Server {
    url: String,
    log: Arc<Log>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist")
}

fn serve(b: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mnist/", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(vec![]));
    let log2 = log.clone();
    let cut_done = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let _ = handle(s, &b, &log2, &cut_done);
        }
    });
    Server { url, log }
}

fn handle(
    mut s: TcpStream,
    b: &Behaviour,
    log: &Log,
    cut_done: &AtomicBool,
) -> std::io::Result<()> {
    let mut r = BufReader::new(s.try_clone()?);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut range = None;
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        if h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("range")
        {
            range = Some(v.trim().to_string());
        }
    }
    log.lock().unwrap().push((path.clone(), range.clone()));
    let name = path.trim_start_matches("/mnist/");
    let Ok(mut body) = std::fs::read(root().join(name)) else {
        s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
        return Ok(());
    };
    if b.tamper.is_some_and(|t| name.contains(t)) {
        let mut raw = ant::data::read_maybe_gz(&root().join(name)).unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&raw)?;
        body = enc.finish()?;
    }
    let total = body.len();
    let from = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.trim_end_matches('-').parse::<usize>().ok())
        .filter(|_| b.honour_range);
    let (head, part) = match from {
        Some(f) if f < total => (
            format!(
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {f}-{}/{total}\r\nContent-Length: {}\r\n",
                total - 1,
                total - f
            ),
            &body[f..],
        ),
        Some(_) => (
            "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\n".to_string(),
            &body[..0],
        ),
        None => (
            format!("HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n"),
            &body[..],
        ),
    };
    s.write_all(head.as_bytes())?;
    s.write_all(b"Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n")?;
    if let Some((n, k)) = b.cut
        && name.contains(n)
        && !cut_done.swap(true, Ordering::SeqCst)
    {
        s.write_all(&part[..k])?;
        return Ok(()); // dropped: the client sees the connection close early
    }
    s.write_all(part)
}

fn fetch(dir: &Path, url: &str) -> Output {
    let d = dir.to_str().unwrap();
    common::ant(&["data", "fetch", "mnist", "--dir", d, "--base-url", url])
}

const FILES: [&str; 4] = [
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
];

fn assert_complete(dir: &Path) {
    for f in FILES {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(root().join(f)).unwrap(),
            "{f}"
        );
        assert!(!dir.join(format!("{f}.part")).exists());
    }
    let (train, test) = ant::data::idx::load_idx_dir(dir).unwrap();
    assert_eq!((train.len(), test.len()), (60_000, 10_000));
}

#[test]
fn downloads_verifies_and_keeps_verified_files() {
    let srv = serve(Behaviour {
        honour_range: true,
        ..Default::default()
    });
    let d = tempfile::tempdir().unwrap();
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_complete(d.path());
    assert_eq!(srv.log.lock().unwrap().len(), 4);
    // A second run downloads nothing.
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("present and verified"));
    assert_eq!(srv.log.lock().unwrap().len(), 4);
}

#[test]
fn an_interrupted_download_resumes_with_range() {
    let srv = serve(Behaviour {
        honour_range: true,
        cut: Some(("train-images", 3_000_000)),
        ..Default::default()
    });
    let d = tempfile::tempdir().unwrap();
    let o = fetch(d.path(), &srv.url);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("train-images-idx3-ubyte.gz"), "{e}");
    let part = d.path().join("train-images-idx3-ubyte.gz.part");
    let had = std::fs::metadata(&part).unwrap().len();
    assert!(had > 0, "the partial download is kept");
    assert!(!d.path().join("train-images-idx3-ubyte.gz").exists());
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_complete(d.path());
    let log = srv.log.lock().unwrap();
    assert!(
        log.iter()
            .any(|(p, r)| p.ends_with("train-images-idx3-ubyte.gz")
                && r.as_deref() == Some(&format!("bytes={had}-"))),
        "{log:?}"
    );
}

#[test]
fn a_server_ignoring_range_means_starting_over() {
    let srv = serve(Behaviour::default());
    let d = tempfile::tempdir().unwrap();
    // A stale partial file of junk: the server answers 200, so it is replaced.
    std::fs::write(d.path().join("t10k-labels-idx1-ubyte.gz.part"), [7u8; 1000]).unwrap();
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_complete(d.path());
    let log = srv.log.lock().unwrap();
    assert!(log.iter().any(|(_, r)| r.as_deref() == Some("bytes=1000-")));
}

#[test]
fn a_checksum_mismatch_leaves_no_file() {
    let srv = serve(Behaviour {
        honour_range: true,
        tamper: Some("t10k-labels"),
        ..Default::default()
    });
    let d = tempfile::tempdir().unwrap();
    let o = fetch(d.path(), &srv.url);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("t10k-labels-idx1-ubyte.gz")
            && e.contains("checksum mismatch")
            && e.contains("27ae3e4e09519cfbb04c329615203637"),
        "{e}"
    );
    assert!(!e.contains("panicked"));
    assert!(!d.path().join("t10k-labels-idx1-ubyte.gz").exists());
    assert!(!d.path().join("t10k-labels-idx1-ubyte.gz.part").exists());
    // An unreachable server: a clear error naming the URL.
    let o = fetch(d.path(), "http://127.0.0.1:9/");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("127.0.0.1:9"));
}
