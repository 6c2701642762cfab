//! `ant data fetch`: download MNIST, Fashion-MNIST or CIFAR-10 and verify them.
//!
//! Each file is downloaded to `NAME.part`, resumed with an HTTP `Range` request when
//! a partial file is there (a server that answers 200 instead of 206 restarts it),
//! verified, and only then renamed to `NAME`: a download that fails verification
//! (a wrong checksum, or a file that cannot be unpacked) is removed, never left in
//! place as if good. IDX files are verified on their unpacked content (published
//! checksums), so mirrors and recompressed copies pass too.
//!
//! A server cannot make a download hang or fill the disk: connecting, every read and
//! the whole file have time limits and the body a minimum speed ([`FetchOptions`]),
//! each file a size cap derived from its known size, and only `http` / `https`
//! redirects are followed (at most [`FetchOptions::max_redirects`]). A file already in
//! the directory that fails its check is replaced only once a verified copy has been
//! downloaded: a failed download leaves it as it was.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{AntError, Result};
use crate::store::checksum::file_md5;
use part::{check_part_is_ours, part_path, remove_part, stamp_path};

/// The data sets `fetch` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    Mnist,
    FashionMnist,
    Cifar10,
}

crate::named::named!(Known {
    Mnist => "mnist",
    FashionMnist => "fashion-mnist",
    Cifar10 => "cifar10",
});

/// What a downloaded file must match.
enum Check {
    /// MD5 of the gunzipped content.
    Unpacked(&'static str),
    /// MD5 of the file as downloaded.
    Raw(&'static str),
}

struct Remote {
    name: &'static str,
    check: Check,
    /// Bytes of what the check reads: the unpacked content for [`Check::Unpacked`],
    /// the file itself for [`Check::Raw`].
    size: u64,
}

impl Remote {
    /// The most bytes a good copy of this file can have: the file's own size, or for
    /// gzipped files the unpacked size plus gzip's worst-case overhead (stored blocks
    /// add 5 bytes per 64 KiB) and room for headers, so that an uncompressed or a
    /// recompressed copy from a mirror fits.
    fn max_bytes(&self) -> u64 {
        match self.check {
            Check::Unpacked(_) => self.size + self.size / 256 + (64 << 10),
            Check::Raw(_) => self.size,
        }
    }
}

/// The four IDX files of MNIST and Fashion-MNIST, which have the same shapes.
const fn idx_files(md5s: [&'static str; 4]) -> [Remote; 4] {
    [
        Remote {
            name: "train-images-idx3-ubyte.gz",
            check: Check::Unpacked(md5s[0]),
            size: 16 + 60_000 * 28 * 28,
        },
        Remote {
            name: "train-labels-idx1-ubyte.gz",
            check: Check::Unpacked(md5s[1]),
            size: 8 + 60_000,
        },
        Remote {
            name: "t10k-images-idx3-ubyte.gz",
            check: Check::Unpacked(md5s[2]),
            size: 16 + 10_000 * 28 * 28,
        },
        Remote {
            name: "t10k-labels-idx1-ubyte.gz",
            check: Check::Unpacked(md5s[3]),
            size: 8 + 10_000,
        },
    ]
}

const MNIST: [Remote; 4] = idx_files([
    "6bbc9ace898e44ae57da46a324031adb",
    "a25bea736e30d166cdddb491f175f624",
    "2646ac647ad5339dbf082846283269ea",
    "27ae3e4e09519cfbb04c329615203637",
]);

const FASHION: [Remote; 4] = idx_files([
    "f4a8712d7a061bf5bd6d2ca38dc4d50a",
    "9018921c3c673c538a1fc5bad174d6f9",
    "8181f5470baa50b63fa0f6fddb340f0a",
    "15d484375f8d13e6eb1aabb0c3f46965",
]);

/// Only the archive's checksum is published for CIFAR-10.
const CIFAR: [Remote; 1] = [Remote {
    name: "cifar-10-binary.tar.gz",
    check: Check::Raw("c32a1d4ab5d03f1284b67883e8d87530"),
    size: 170_052_171,
}];

impl Known {
    /// The canonical public URL prefix (file names are appended).
    pub(crate) fn default_base_url(self) -> &'static str {
        match self {
            Known::Mnist => "https://storage.googleapis.com/cvdf-datasets/mnist/",
            Known::FashionMnist => "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
            Known::Cifar10 => "https://www.cs.toronto.edu/~kriz/",
        }
    }

    fn files(self) -> &'static [Remote] {
        match self {
            Known::Mnist => &MNIST,
            Known::FashionMnist => &FASHION,
            Known::Cifar10 => &CIFAR,
        }
    }
}

/// Where [`fetch`] downloads from and how long it waits. `Default` holds the limits
/// `ant data fetch` uses; tests shorten them.
#[derive(Clone, Debug, PartialEq)]
pub struct FetchOptions {
    /// Replaces the data set's canonical URL prefix (the file names are appended).
    pub base_url: Option<String>,
    /// The longest wait for a connection.
    pub connect_timeout: Duration,
    /// The longest wait for any byte of a response (headers or body).
    pub read_timeout: Duration,
    /// The longest one file's download may take; a later run resumes it.
    pub total_timeout: Duration,
    /// The slowest accepted body, in bytes per second averaged over each
    /// `read_timeout` (0: no minimum); a later run resumes the download.
    pub min_speed: u64,
    /// Redirects followed per file (http and https only).
    pub max_redirects: u32,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            base_url: None,
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(60),
            total_timeout: Duration::from_secs(3600),
            min_speed: 1024,
            max_redirects: 5,
        }
    }
}

impl FetchOptions {
    /// The canonical URL prefix replaced by `base_url` (e.g. a mirror).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }
}

/// What a check of a file found.
enum Verdict {
    Verified,
    /// What differs, for messages.
    Mismatch(String),
}

/// What [`fetch`] has just done with a file, for a front end to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The file was already there and passed its check.
    Present,
    Downloaded,
    /// An archive was unpacked into this directory.
    Unpacked,
}

/// Receives [`fetch`]'s progress. Every method has a do-nothing default.
pub trait FetchProgress {
    /// A download of `file` begins at byte `start` of `total` (when the server says).
    fn download_started(&mut self, _file: &str, _start: u64, _total: Option<u64>) {}
    fn received(&mut self, _bytes: u64) {}
    fn download_ended(&mut self) {}
    /// `path` is in place.
    fn step(&mut self, _path: &Path, _step: Step) {}
    /// `path` is there but fails its check (`why`): it is downloaded again; once the
    /// new copy is verified, the file there moves to `kept_as` (a user's file of the
    /// same name is never lost).
    fn replacing(&mut self, _path: &Path, _why: &str, _kept_as: &Path) {}
}

/// Reports nothing.
pub struct Quiet;
impl FetchProgress for Quiet {}

/// Whether `path` passes its check. A file that cannot be unpacked, or unpacks to
/// more than the file can hold, fails it; only a file that cannot be read is an error.
fn verify(path: &Path, f: &Remote) -> Result<Verdict> {
    let (got, want, what) = match f.check {
        Check::Unpacked(want) => match unpacked_md5(path, f.size)? {
            Ok(got) => (got, want, "unpacked md5"),
            Err(why) => return Ok(Verdict::Mismatch(why)),
        },
        Check::Raw(want) => (file_md5(path)?, want, "md5"),
    };
    Ok(if got == want {
        Verdict::Verified
    } else {
        Verdict::Mismatch(format!("{what} {got}, expected {want}"))
    })
}

/// Hex MD5 of the content of `path`, gunzipped when it starts with the gzip magic
/// bytes, read as a stream (a gzip bomb costs no memory). `Ok(Err(why))`: the content
/// cannot be unpacked, or is longer than `limit` bytes.
fn unpacked_md5(path: &Path, limit: u64) -> Result<std::result::Result<String, String>> {
    use md5::{Digest, Md5};
    let io = |e| AntError::io(path, e);
    let mut file = BufReader::new(File::open(path).map_err(io)?);
    let gz = file
        .fill_buf()
        .map_err(io)?
        .starts_with(&crate::data::GZIP_MAGIC);
    let mut reader: Box<dyn Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut hasher = Md5::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // The decoder's verdicts on the content; anything else is the disk's.
            Err(e)
                if gz
                    && matches!(
                        e.kind(),
                        std::io::ErrorKind::InvalidData
                            | std::io::ErrorKind::InvalidInput
                            | std::io::ErrorKind::UnexpectedEof
                    ) =>
            {
                return Ok(Err(format!("cannot unpack: corrupt gzip stream ({e})")));
            }
            Err(e) => return Err(io(e)),
        };
        total += n as u64;
        if total > limit {
            return Ok(Err(format!(
                "unpacks to more than the {limit} bytes expected"
            )));
        }
        hasher.update(&buf[..n]);
    }
    Ok(Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()))
}

/// One file's download: where from, into which `.part`, within which limits.
struct Job<'a> {
    agent: &'a ureq::Agent,
    url: &'a str,
    part: &'a Path,
    /// The most bytes the file may have.
    max_bytes: u64,
    opts: &'a FetchOptions,
    /// When the whole download must have ended.
    deadline: Instant,
}

/// Downloads `job.url` into `job.part`, continuing a partial file when the server
/// honours `Range`. Returns the number of bytes received in this call. A download
/// cut short (connection lost, too slow, out of time) keeps its `.part` for the next
/// run to resume; one that is longer than the file can be loses it.
fn download(job: &Job, progress: &mut dyn FetchProgress) -> Result<u64> {
    let (url, part) = (job.url, job.part);
    let mut have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    if have >= job.max_bytes {
        // Whole already (it failed its check) or too long: start over.
        remove_part(part)?;
        have = 0;
    }
    let Some(resp) = request(job, have)? else {
        // The partial file is already whole (or larger than the file): start over.
        remove_part(part)?;
        return download(job, progress);
    };
    let resumed = have > 0 && resp.status() == 206;
    if have > 0 && !resumed {
        tracing::info!("{url}: server ignored Range, starting over");
    }
    let start = if resumed { have } else { 0 };
    let len: Option<u64> = resp.header("Content-Length").and_then(|v| v.parse().ok());
    if let Some(l) = len
        && start + l > job.max_bytes
    {
        return Err(download_error(
            url,
            format!(
                "the server announces {} bytes, more than the {} this file can have",
                start + l,
                job.max_bytes
            ),
        ));
    }
    if !resumed {
        // Stamped before its first byte: the `.part` is then provably ant's.
        crate::store::atomic::write_atomic(&stamp_path(part), url.as_bytes())?;
    }
    let mut file = if resumed {
        OpenOptions::new().append(true).open(part)
    } else {
        File::create(part)
    }
    .map_err(|e| AntError::io(part, e))?;
    progress.download_started(&file_name(part), start, len.map(|l| l + start));
    let got = copy_body(job, &mut resp.into_reader(), &mut file, start, progress);
    progress.download_ended();
    let got = match got {
        Ok(got) => got,
        Err(Cut::Keep(e)) => {
            // What arrived is good as far as it goes: keep it for the next run.
            let _ = file.sync_all();
            return Err(e);
        }
        Err(Cut::Remove(e)) => {
            drop(file);
            remove_part(part)?;
            return Err(e);
        }
    };
    file.sync_all().map_err(|e| AntError::io(part, e))?;
    if let Some(l) = len
        && got < l
    {
        return Err(download_error(
            url,
            format!("connection closed after {got} of {l} bytes; run again to resume"),
        ));
    }
    Ok(got)
}

pub(super) fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(AntError::io(path, e)),
        _ => Ok(()),
    }
}

/// A failed download of `url`.
fn download_error(url: &str, reason: String) -> AntError {
    AntError::Download {
        url: url.to_string(),
        reason,
    }
}

/// Sends the GET for `job.url`, asking for the bytes after the `have` already there,
/// and follows up to `max_redirects` http(s) redirects.
/// `None`: the server refused that range (HTTP 416), so the partial file must go.
fn request(job: &Job, have: u64) -> Result<Option<ureq::Response>> {
    let url = job.url;
    let mut current =
        url::Url::parse(url).map_err(|e| download_error(url, format!("not a valid URL: {e}")))?;
    let mut redirects = 0;
    loop {
        check_scheme(url, &current)?;
        if Instant::now() >= job.deadline {
            return Err(out_of_time(job));
        }
        let mut req = job.agent.request_url("GET", &current);
        if have > 0 {
            req = req.set("Range", &format!("bytes={have}-"));
        }
        let resp = match req.call() {
            Ok(r) => r,
            Err(ureq::Error::Status(416, _)) if have > 0 => return Ok(None),
            Err(ureq::Error::Status(code, r)) => {
                return Err(download_error(
                    url,
                    format!("HTTP {code} {}{}", r.status_text(), via(url, &current)),
                ));
            }
            // The URL is already the error's subject: report only what went wrong.
            Err(ureq::Error::Transport(t)) => {
                let detail = std::error::Error::source(&t)
                    .map(|c| c.to_string())
                    .or(t.message().map(str::to_string))
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                return Err(download_error(
                    url,
                    format!("{}{detail}{}", t.kind(), via(url, &current)),
                ));
            }
        };
        if !matches!(resp.status(), 301 | 302 | 303 | 307 | 308) {
            if (300..400).contains(&resp.status()) {
                return Err(download_error(
                    url,
                    format!(
                        "unexpected HTTP {} {}{}",
                        resp.status(),
                        resp.status_text(),
                        via(url, &current)
                    ),
                ));
            }
            return Ok(Some(resp));
        }
        let Some(location) = resp.header("Location") else {
            return Err(download_error(
                url,
                format!("HTTP {} redirect without a Location", resp.status()),
            ));
        };
        let next = current.join(location).map_err(|e| {
            download_error(url, format!("redirected to {location:?}, not a URL: {e}"))
        })?;
        redirects += 1;
        if redirects > job.opts.max_redirects {
            return Err(download_error(
                url,
                format!(
                    "more than {} redirects (the last to {next})",
                    job.opts.max_redirects
                ),
            ));
        }
        current = next;
    }
}

/// Refuses any URL that is not http or https (e.g. a redirect to `file://`).
fn check_scheme(url: &str, target: &url::Url) -> Result<()> {
    if matches!(target.scheme(), "http" | "https") {
        return Ok(());
    }
    let what = if target.as_str() == url {
        "not an http or https URL".to_string()
    } else {
        format!("redirected to {target}: only http and https redirects are followed")
    };
    Err(download_error(url, what))
}

/// " (redirected to X)" when `current` is not the URL asked for.
fn via(url: &str, current: &url::Url) -> String {
    if current.as_str() == url {
        String::new()
    } else {
        format!(" (redirected to {current})")
    }
}

fn out_of_time(job: &Job) -> AntError {
    download_error(
        job.url,
        format!(
            "timed out: the download took longer than {} s; run again to resume",
            job.opts.total_timeout.as_secs_f64()
        ),
    )
}

/// The file a `.part` path stands for, as progress reports name it.
fn file_name(part: &Path) -> String {
    part.file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".part").to_string())
        .unwrap_or_default()
}

/// Why a body was not received whole, and what becomes of the `.part`.
enum Cut {
    /// Cut short: what arrived stays, for the next run to resume.
    Keep(AntError),
    /// Wrong: the `.part` must go.
    Remove(AntError),
}

/// Copies the response body into `file` (the `.part` file, which already holds
/// `start` bytes), reporting progress, within the job's time, speed and size limits.
/// Returns the number of bytes copied.
fn copy_body(
    job: &Job,
    reader: &mut dyn Read,
    file: &mut File,
    start: u64,
    progress: &mut dyn FetchProgress,
) -> std::result::Result<u64, Cut> {
    let (url, part, opts) = (job.url, job.part, job.opts);
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    // The speed is averaged over windows of `read_timeout`.
    let window = opts.read_timeout.max(Duration::from_millis(1));
    let (mut window_start, mut window_bytes) = (Instant::now(), 0u64);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Cut::Keep(download_error(
                    url,
                    format!(
                        "download interrupted after {} bytes: {e}; run again to resume",
                        start + got
                    ),
                )));
            }
        };
        if n == 0 {
            return Ok(got);
        }
        if start + got + n as u64 > job.max_bytes {
            return Err(Cut::Remove(download_error(
                url,
                format!(
                    "the server sent more than the {} bytes this file can have; the download was removed",
                    job.max_bytes
                ),
            )));
        }
        file.write_all(&buf[..n])
            .map_err(|e| Cut::Keep(AntError::io(part, e)))?;
        got += n as u64;
        window_bytes += n as u64;
        progress.received(n as u64);
        let now = Instant::now();
        if now >= job.deadline {
            return Err(Cut::Keep(out_of_time(job)));
        }
        let elapsed = now - window_start;
        if elapsed >= window {
            let speed = window_bytes as f64 / elapsed.as_secs_f64();
            if speed < opts.min_speed as f64 {
                return Err(Cut::Keep(download_error(
                    url,
                    format!(
                        "too slow: {window_bytes} bytes in the last {:.1} s, below {} bytes/s; run again to resume",
                        elapsed.as_secs_f64(),
                        opts.min_speed
                    ),
                )));
            }
            (window_start, window_bytes) = (now, 0);
        }
    }
}

/// Downloads and verifies every file of `set` into `dir`. Files already there and
/// verified are kept; one that fails its check is replaced once a verified copy has
/// been downloaded. CIFAR-10's archive is unpacked into `dir` (giving
/// `cifar-10-batches-bin/`).
pub fn fetch(
    set: Known,
    dir: &Path,
    opts: &FetchOptions,
    progress: &mut dyn FetchProgress,
) -> Result<()> {
    let base = opts.base_url.as_deref().unwrap_or(set.default_base_url());
    if let Err(e) = url::Url::parse(base) {
        return Err(download_error(base, format!("not a valid URL: {e}")));
    }
    crate::store::outputs::check(dir, crate::store::outputs::Kind::Dir, &[])?;
    crate::store::atomic::create_dir_all(dir)?;
    let agent = agent(opts);
    // Every file's `.part` is checked before the first download: a user's `.part` of
    // the last file is named even when the network fails at the first.
    for f in set.files() {
        check_part_is_ours(&part_path(&dir.join(f.name)), &file_url(base, f))?;
    }
    for f in set.files() {
        fetch_file(&agent, base, f, dir, opts, progress)?;
        check_unpacked_copy(f, dir, progress)?;
    }
    if set == Known::Cifar10 {
        unpack_into(&dir.join(CIFAR[0].name), dir)?;
        progress.step(&dir.join("cifar-10-batches-bin"), Step::Unpacked);
    }
    Ok(())
}

/// A gzipped IDX file's unpacked copy beside it (`NAME` for `NAME.gz`) is what the
/// data loader reads first: it must pass the same check, else it is an error (it is
/// the user's file, so it is left in place).
fn check_unpacked_copy(f: &Remote, dir: &Path, progress: &mut dyn FetchProgress) -> Result<()> {
    let (Check::Unpacked(_), Some(name)) = (&f.check, f.name.strip_suffix(".gz")) else {
        return Ok(());
    };
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    if !path.is_file() {
        let msg = format!(
            "is not a file, and stands where `ant train` looks for {name} before {}: remove it",
            f.name
        );
        return Err(AntError::data(&path, msg));
    }
    match verify(&path, f)? {
        Verdict::Verified => {
            progress.step(&path, Step::Present);
            Ok(())
        }
        Verdict::Mismatch(why) => {
            let msg = format!(
                "fails its check ({why}), and `ant train` would read it instead of the verified {}: remove it (or replace it by that file unpacked)",
                f.name
            );
            Err(AntError::data(&path, msg))
        }
    }
}

/// Unpacks the gzipped tar `archive` into `dir`: into a temporary directory beside what
/// it makes first, then moved in, so that a directory that was not there appears
/// whole (an interrupted unpack leaves none of it); in one that was, each file is
/// replaced whole and the user's other files stay. Leftovers of an interrupted unpack
/// (`.unpack.PID.tmp`) are removed by the next.
fn unpack_into(archive: &Path, dir: &Path) -> Result<()> {
    crate::store::atomic::remove_stale_siblings(&dir.join("unpack"))?;
    let tmp = dir.join(format!(".unpack.{}.tmp", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| AntError::io(&tmp, e))?;
    }
    crate::store::atomic::create_dir_all(&tmp)?;
    let res = (|| {
        let file = File::open(archive).map_err(|e| AntError::io(archive, e))?;
        tar::Archive::new(flate2::read::GzDecoder::new(file))
            .unpack(&tmp)
            .map_err(|e| AntError::data(archive, format!("cannot unpack: {e}")))?;
        move_into(&tmp, dir)
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    res
}

/// Moves everything in `from` into `to` by renames: a directory missing in `to` moves
/// whole, one there is merged into, a file replaces its namesake.
fn move_into(from: &Path, to: &Path) -> Result<()> {
    for e in std::fs::read_dir(from).map_err(|e| AntError::io(from, e))? {
        let e = e.map_err(|e| AntError::io(from, e))?;
        let dest = to.join(e.file_name());
        let is_dir = e
            .file_type()
            .map_err(|err| AntError::io(e.path(), err))?
            .is_dir();
        if is_dir && dest.is_dir() {
            move_into(&e.path(), &dest)?;
        } else {
            std::fs::rename(e.path(), &dest).map_err(|err| AntError::io(&dest, err))?;
        }
    }
    Ok(())
}

/// The HTTP client with `opts`' timeouts. Redirects are followed by `request`, which
/// checks where they lead.
fn agent(opts: &FetchOptions) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout_connect(opts.connect_timeout)
        .timeout_read(opts.read_timeout)
        .timeout_write(opts.read_timeout)
        .redirects(0)
        .build()
}

/// Where `f` is downloaded from under `base`.
fn file_url(base: &str, f: &Remote) -> String {
    let sep = if base.ends_with('/') { "" } else { "/" };
    format!("{base}{sep}{}", f.name)
}

/// Makes `dir/f` a verified copy of `base/f`: kept when already verified, else
/// downloaded (or a whole `.part` finished) and checked before it replaces anything.
fn fetch_file(
    agent: &ureq::Agent,
    base: &str,
    f: &Remote,
    dir: &Path,
    opts: &FetchOptions,
    progress: &mut dyn FetchProgress,
) -> Result<()> {
    let path = dir.join(f.name);
    // Said before a download that could never be put in place.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        return Err(AntError::data(
            &path,
            "is a folder where this file belongs: move it",
        ));
    }
    // A file in place that fails its check stays until a verified copy takes its
    // place; then it moves aside (it may be the user's own, not a damaged download).
    let mut failing = None;
    if path.is_file() {
        match verify(&path, f)? {
            Verdict::Verified => {
                progress.step(&path, Step::Present);
                return Ok(());
            }
            Verdict::Mismatch(why) => {
                let aside = aside_name(&path);
                progress.replacing(&path, &why, &aside);
                failing = Some((why, aside));
            }
        }
    }
    let kept = |e: AntError| match (&failing, e) {
        (Some((why, _)), AntError::Download { url, reason }) => AntError::Download {
            url,
            reason: format!(
                "{reason}; {} (which fails its check: {why}) was left as it was",
                path.display()
            ),
        },
        (_, e) => e,
    };
    let url = file_url(base, f);
    let part = part_path(&path);
    let job = Job {
        agent,
        url: &url,
        part: &part,
        max_bytes: f.max_bytes(),
        opts,
        deadline: Instant::now() + opts.total_timeout,
    };
    check_part_is_ours(&part, &url)?;
    // A whole `.part` (a run stopped before renaming it) needs no download.
    if !(part.is_file() && matches!(verify(&part, f)?, Verdict::Verified)) {
        download(&job, progress).map_err(kept)?;
        if let Verdict::Mismatch(why) = verify(&part, f)? {
            remove_part(&part)?;
            let old = match failing {
                Some(_) => "; the file already there was left as it was",
                None => "",
            };
            return Err(AntError::data(
                &path,
                format!("checksum mismatch ({why}) for {url}; the download was removed{old}"),
            ));
        }
    }
    if let Some((_, aside)) = &failing {
        std::fs::rename(&path, aside).map_err(|e| AntError::io(&path, e))?;
    }
    std::fs::rename(&part, &path).map_err(|e| AntError::io(&path, e))?;
    remove(&stamp_path(&part))?;
    progress.step(&path, Step::Downloaded);
    Ok(())
}

/// Where a file that fails its check goes when a verified copy takes its place:
/// `NAME.replaced`, or `NAME.replaced.K` for the first K free.
fn aside_name(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    (0..)
        .map(|k| match k {
            0 => path.with_file_name(format!("{name}.replaced")),
            k => path.with_file_name(format!("{name}.replaced.{k}")),
        })
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("a free name")
}

mod part;
#[cfg(test)]
mod tests;
