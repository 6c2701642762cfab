//! `ant data fetch` against a loopback HTTP server that this test runs itself, serving
//! the real MNIST files shipped in `data/mnist`: download + verification, resume
//! with `Range`, a server that ignores `Range`, a checksum mismatch, and servers that
//! misbehave: redirects (to `file://`, in a loop), a slow drip, silence, an endless
//! body, a body that cannot be unpacked, a 404 for a file already (badly) there.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ant::fetch::{FetchOptions, Known, Quiet};

mod common;

#[derive(Clone, Default)]
struct Behaviour {
    /// Answer `Range` requests with 206 (else ignore them: 200 and the whole file).
    honour_range: bool,
    /// Close the first response for a name containing this after this many bytes.
    cut: Option<(&'static str, usize)>,
    /// Serve a file with one unpacked byte changed (recompressed, so gzip is valid).
    tamper: Option<&'static str>,
    /// Misbehave this way for names containing this.
    special: Option<(&'static str, Special)>,
}

/// Ways a server misbehaves.
#[derive(Clone, Copy)]
enum Special {
    /// HTTP 302 to this location.
    RedirectTo(&'static str),
    /// HTTP 301 to the relative `../moved/NAME`, which serves the file.
    Moved,
    /// HTTP 302 to itself, forever.
    Loop,
    /// The headers, then one byte of the body every 100 ms (at most 100 bytes).
    Drip,
    /// Reads the request, then says nothing for 10 s.
    Silent,
    /// A body without a length that never ends.
    Endless,
    /// Announces a terabyte.
    Huge,
    /// The gzip file with its last 100 bytes cut off, announced as such: the download
    /// is whole, but the file cannot be unpacked.
    Truncated,
    /// HTTP 404.
    NotFound,
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
            let (b, log, cut_done) = (b.clone(), log2.clone(), cut_done.clone());
            std::thread::spawn(move || handle(s, &b, &log, &cut_done));
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
    let name = path
        .trim_start_matches("/mnist/")
        .trim_start_matches("/moved/");
    let special = b
        .special
        .filter(|(n, _)| name.contains(n) && !path.starts_with("/moved/"))
        .map(|(_, sp)| sp);
    if let Some(sp) = special {
        return misbehave(&mut s, sp, name);
    }
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

/// Answers the request for `name` as `sp` says.
fn misbehave(s: &mut TcpStream, sp: Special, name: &str) -> std::io::Result<()> {
    let head = |status: &str, extra: &str| {
        format!("HTTP/1.1 {status}\r\n{extra}Connection: close\r\n\r\n")
    };
    match sp {
        Special::RedirectTo(to) => {
            s.write_all(
                head(
                    "302 Found",
                    &format!("Location: {to}\r\nContent-Length: 0\r\n"),
                )
                .as_bytes(),
            )?;
        }
        Special::Moved => {
            let to = format!("Location: ../moved/{name}\r\nContent-Length: 0\r\n");
            s.write_all(head("301 Moved Permanently", &to).as_bytes())?;
        }
        Special::Loop => {
            let to = format!("Location: /mnist/{name}\r\nContent-Length: 0\r\n");
            s.write_all(head("302 Found", &to).as_bytes())?;
        }
        Special::Drip => {
            let len = std::fs::metadata(root().join(name))?.len();
            s.write_all(head("200 OK", &format!("Content-Length: {len}\r\n")).as_bytes())?;
            let body = std::fs::read(root().join(name))?;
            for b in &body[..100] {
                std::thread::sleep(Duration::from_millis(100));
                s.write_all(std::slice::from_ref(b))?;
            }
        }
        Special::Silent => std::thread::sleep(Duration::from_secs(10)),
        Special::Endless => {
            s.write_all(head("200 OK", "").as_bytes())?;
            let zeros = vec![0u8; 1 << 16];
            loop {
                s.write_all(&zeros)?;
            }
        }
        Special::Huge => {
            s.write_all(head("200 OK", "Content-Length: 1000000000000\r\n").as_bytes())?;
        }
        Special::Truncated => {
            let body = std::fs::read(root().join(name))?;
            let body = &body[..body.len() - 100];
            let len = format!("Content-Length: {}\r\n", body.len());
            s.write_all(head("200 OK", &len).as_bytes())?;
            s.write_all(body)?;
        }
        Special::NotFound => {
            s.write_all(head("404 Not Found", "Content-Length: 0\r\n").as_bytes())?;
        }
    }
    Ok(())
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
    // A stale partial file of junk that ant started (stamped with its URL): the
    // server answers 200, so it is replaced.
    let part = d.path().join("t10k-labels-idx1-ubyte.gz.part");
    std::fs::write(&part, [7u8; 1000]).unwrap();
    let url = format!("{}t10k-labels-idx1-ubyte.gz", srv.url);
    std::fs::write(d.path().join("t10k-labels-idx1-ubyte.gz.part.ant"), &url).unwrap();
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

/// Exit code 2 and one `error:` line (returned), no panic.
fn one_error(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    errors[0].to_string()
}

fn special(name: &'static str, sp: Special) -> Server {
    serve(Behaviour {
        honour_range: true,
        special: Some((name, sp)),
        ..Default::default()
    })
}

#[test]
fn http_redirects_are_followed_others_refused() {
    // A relative redirect to another path of the same server.
    let srv = special("images", Special::Moved);
    let d = tempfile::tempdir().unwrap();
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_complete(d.path());
    let moved = srv
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p.starts_with("/moved/"))
        .count();
    assert_eq!(moved, 2);

    // To a file on this machine: refused (the HTTP client used to panic on it).
    let srv = special("train-images", Special::RedirectTo("file:///etc/passwd"));
    let d = tempfile::tempdir().unwrap();
    let e = one_error(&fetch(d.path(), &srv.url));
    assert!(
        e.contains("train-images-idx3-ubyte.gz")
            && e.contains("file:///etc/passwd")
            && e.contains("only http and https"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing written"
    );

    // In a circle: given up after a few.
    let srv = special("train-images", Special::Loop);
    let e = one_error(&fetch(d.path(), &srv.url));
    assert!(e.contains("more than 5 redirects"), "{e}");
    assert_eq!(srv.log.lock().unwrap().len(), 6);

    // A --base-url that is not http(s) at all.
    let e = one_error(&fetch(d.path(), "file:///tmp/"));
    assert!(e.contains("not an http or https URL"), "{e}");
}

/// The library's options with short limits, so that a test takes seconds.
fn quick(url: &str) -> FetchOptions {
    FetchOptions {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(1),
        total_timeout: Duration::from_secs(30),
        ..FetchOptions::default().with_base_url(url)
    }
}

fn fetch_lib(dir: &Path, opts: &FetchOptions) -> String {
    let e = ant::fetch::fetch(Known::Mnist, dir, opts, &mut Quiet).unwrap_err();
    assert!(matches!(e, ant::AntError::Download { .. }), "{e:?}");
    e.to_string()
}

#[test]
fn slow_and_silent_servers_time_out() {
    let part = |d: &Path| d.join("train-images-idx3-ubyte.gz.part");
    // One byte every 100 ms: below the minimum speed (1 KB/s over each second).
    let srv = special("train-images", Special::Drip);
    let d = tempfile::tempdir().unwrap();
    let opts = FetchOptions {
        min_speed: 1000,
        ..quick(&srv.url)
    };
    let e = fetch_lib(d.path(), &opts);
    assert!(
        e.contains("too slow") && e.contains("run again to resume"),
        "{e}"
    );
    let kept = std::fs::metadata(part(d.path())).unwrap().len();
    assert!(
        kept > 0 && kept < 100,
        "what arrived is kept for resuming: {kept}"
    );

    // The same drip against the total time allowed (no minimum speed).
    let srv = special("train-images", Special::Drip);
    let d = tempfile::tempdir().unwrap();
    let opts = FetchOptions {
        min_speed: 0,
        total_timeout: Duration::from_secs(1),
        ..quick(&srv.url)
    };
    let e = fetch_lib(d.path(), &opts);
    assert!(
        e.contains("timed out") && e.contains("longer than 1 s"),
        "{e}"
    );
    assert!(part(d.path()).exists());

    // Nothing at all after the request: the read timeout.
    let srv = special("train-images", Special::Silent);
    let d = tempfile::tempdir().unwrap();
    let e = fetch_lib(d.path(), &quick(&srv.url));
    assert!(
        e.contains("train-images-idx3-ubyte.gz") && e.contains("timed out"),
        "{e}"
    );
}

#[test]
fn an_endless_or_oversized_body_is_refused_at_the_size_cap() {
    let labels = "t10k-labels-idx1-ubyte.gz";
    let srv = special("t10k-labels", Special::Endless);
    let d = tempfile::tempdir().unwrap();
    let e = one_error(&fetch(d.path(), &srv.url));
    assert!(
        e.contains(labels) && e.contains("more than the") && e.contains("removed"),
        "{e}"
    );
    assert!(!d.path().join(labels).exists());
    assert!(!d.path().join(format!("{labels}.part")).exists());

    let srv = special("t10k-labels", Special::Huge);
    let e = one_error(&fetch(d.path(), &srv.url));
    assert!(
        e.contains(labels) && e.contains("announces 1000000000000 bytes"),
        "{e}"
    );
    assert!(!d.path().join(format!("{labels}.part")).exists());
}

#[test]
fn a_download_that_cannot_be_unpacked_is_removed() {
    let labels = "t10k-labels-idx1-ubyte.gz";
    let srv = special("t10k-labels", Special::Truncated);
    let d = tempfile::tempdir().unwrap();
    let e = one_error(&fetch(d.path(), &srv.url));
    assert!(e.contains(labels) && e.contains("cannot unpack"), "{e}");
    assert!(!d.path().join(labels).exists());
    assert!(!d.path().join(format!("{labels}.part")).exists());
    // So the next run starts afresh, and succeeds against a good server.
    let srv = serve(Behaviour::default());
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_complete(d.path());
}

#[test]
fn a_bad_file_in_place_is_fetched_again_and_kept_until_replaced() {
    let d = tempfile::tempdir().unwrap();
    // A truncated gzip (it used to stop every run with "corrupt gzip stream").
    let real = std::fs::read(root().join("train-labels-idx1-ubyte.gz")).unwrap();
    std::fs::write(
        d.path().join("train-labels-idx1-ubyte.gz"),
        &real[..real.len() / 2],
    )
    .unwrap();
    // A valid gzip with the wrong content, which the server then cannot send (404).
    let mut raw = ant::data::read_maybe_gz(&root().join("t10k-labels-idx1-ubyte.gz")).unwrap();
    raw[100] ^= 1;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&raw).unwrap();
    let tampered = enc.finish().unwrap();
    let labels = d.path().join("t10k-labels-idx1-ubyte.gz");
    std::fs::write(&labels, &tampered).unwrap();

    let srv = special("t10k-labels", Special::NotFound);
    let o = fetch(d.path(), &srv.url);
    let e = one_error(&o);
    assert!(
        e.contains("404")
            && e.contains("t10k-labels-idx1-ubyte.gz")
            && e.contains("left as it was"),
        "{e}"
    );
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(log.contains("fails its check"), "{log}");
    assert_eq!(
        std::fs::read(&labels).unwrap(),
        tampered,
        "the user's file is still there"
    );
    assert_eq!(
        std::fs::read(d.path().join("train-labels-idx1-ubyte.gz")).unwrap(),
        real,
        "the truncated file was fetched again"
    );

    // A complete file of the user's under that name is never replaced: a file that
    // fails its check moves aside when the copy comes in.
    let srv = serve(Behaviour::default());
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_complete(d.path());
    let aside = d.path().join("t10k-labels-idx1-ubyte.gz.replaced");
    assert_eq!(
        std::fs::read(&aside).unwrap(),
        tampered,
        "the user's file is kept"
    );
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        log.contains("moves to") && log.contains(".gz.replaced"),
        "{log}"
    );
}

#[test]
fn an_unpacked_copy_that_fails_its_check_is_an_error_not_read_in_place_of_the_verified_file() {
    let d = tempfile::tempdir().unwrap();
    for f in FILES {
        std::fs::copy(root().join(f), d.path().join(f)).unwrap();
    }
    // The loader reads `NAME` before `NAME.gz`: a corrupted one would be trained on.
    let mut raw = ant::data::read_maybe_gz(&root().join("train-labels-idx1-ubyte.gz")).unwrap();
    let unpacked = d.path().join("train-labels-idx1-ubyte");
    raw[100] ^= 1;
    std::fs::write(&unpacked, &raw).unwrap();
    // A folder where a file belongs is said before any download.
    let folder = d.path().join("sub");
    std::fs::create_dir_all(folder.join("t10k-labels-idx1-ubyte.gz")).unwrap();
    for f in FILES.iter().filter(|f| !f.starts_with("t10k-labels")) {
        std::fs::copy(root().join(f), folder.join(f)).unwrap();
    }
    let o = fetch(&folder, "http://127.0.0.1:9/");
    let e = one_error(&o);
    assert!(
        e.contains("t10k-labels-idx1-ubyte.gz: is a folder where this file belongs"),
        "{e}"
    );
    std::fs::remove_dir_all(&folder).unwrap();
    // Nothing needs downloading: no server.
    let o = fetch(d.path(), "http://127.0.0.1:9/");
    let e = one_error(&o);
    assert!(
        e.contains("train-labels-idx1-ubyte:") && e.contains("fails its check"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&unpacked).unwrap(),
        raw,
        "the user's file stays"
    );
    // A good unpacked copy is verified like the rest.
    raw[100] ^= 1;
    std::fs::write(&unpacked, &raw).unwrap();
    let o = fetch(d.path(), "http://127.0.0.1:9/");
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    assert!(
        log.contains("train-labels-idx1-ubyte: present and verified"),
        "{log}"
    );
}

#[cfg(unix)]
#[test]
fn a_dir_that_is_a_link_to_nowhere_is_named_as_such() {
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(d.path().join("nowhere"), &link).unwrap();
    let e = one_error(&fetch(&link, "http://127.0.0.1:9/"));
    assert!(
        e.contains("symbolic link") && e.contains("leads to nothing"),
        "{e}"
    );
}

/// A `.part` ant did not start (no stamp beside it naming its URL, or one naming
/// another) is a file of the user's: the fetch refuses it by name and leaves it as it
/// was, for every file of the set; ant's own `.part` and stamp are gone once the file
/// is in place.
#[test]
fn a_part_file_ant_did_not_start_is_left_as_it_is() {
    let srv = serve(Behaviour {
        honour_range: true,
        ..Default::default()
    });
    for name in FILES {
        for stamp in [None, Some("http://elsewhere/x")] {
            let d = tempfile::tempdir().unwrap();
            let part = d.path().join(format!("{name}.part"));
            std::fs::write(&part, b"my notes").unwrap();
            if let Some(url) = stamp {
                std::fs::write(d.path().join(format!("{name}.part.ant")), url).unwrap();
            }
            let o = fetch(d.path(), &srv.url);
            common::assert_clean_error(&o, &[&format!("{name}.part"), "ant did not start it"]);
            assert_eq!(std::fs::read(&part).unwrap(), b"my notes", "{name}");
        }
    }
    // Named before any download: even where the network fails at the first file.
    let d = tempfile::tempdir().unwrap();
    let last = d.path().join(format!("{}.part", FILES[3]));
    std::fs::write(&last, b"my notes").unwrap();
    let o = fetch(d.path(), "http://127.0.0.1:9/");
    common::assert_clean_error(&o, &[&format!("{}.part", FILES[3]), "ant did not start it"]);
    assert_eq!(std::fs::read(&last).unwrap(), b"my notes");
    let d = tempfile::tempdir().unwrap();
    let o = fetch(d.path(), &srv.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in FILES {
        for left in [format!("{name}.part"), format!("{name}.part.ant")] {
            assert!(!d.path().join(&left).exists(), "{left} left");
        }
    }
}
