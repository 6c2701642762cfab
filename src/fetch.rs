//! `ant data fetch`: download MNIST, Fashion-MNIST or CIFAR-10 and verify them.
//!
//! Each file is downloaded to `NAME.part`, resumed with an HTTP `Range` request when
//! a partial file is there (a server that answers 200 instead of 206 restarts it),
//! verified, and only then renamed to `NAME`: a file that fails verification is
//! removed, never left in place as if good. IDX files are verified on their unpacked
//! content (published checksums), so mirrors and recompressed copies pass too.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::data::{file_md5, read_maybe_gz};
use crate::error::{AntError, Result};

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
}

const MNIST: [Remote; 4] = [
    Remote {
        name: "train-images-idx3-ubyte.gz",
        check: Check::Unpacked("6bbc9ace898e44ae57da46a324031adb"),
    },
    Remote {
        name: "train-labels-idx1-ubyte.gz",
        check: Check::Unpacked("a25bea736e30d166cdddb491f175f624"),
    },
    Remote {
        name: "t10k-images-idx3-ubyte.gz",
        check: Check::Unpacked("2646ac647ad5339dbf082846283269ea"),
    },
    Remote {
        name: "t10k-labels-idx1-ubyte.gz",
        check: Check::Unpacked("27ae3e4e09519cfbb04c329615203637"),
    },
];

const FASHION: [Remote; 4] = [
    Remote {
        name: "train-images-idx3-ubyte.gz",
        check: Check::Unpacked("f4a8712d7a061bf5bd6d2ca38dc4d50a"),
    },
    Remote {
        name: "train-labels-idx1-ubyte.gz",
        check: Check::Unpacked("9018921c3c673c538a1fc5bad174d6f9"),
    },
    Remote {
        name: "t10k-images-idx3-ubyte.gz",
        check: Check::Unpacked("8181f5470baa50b63fa0f6fddb340f0a"),
    },
    Remote {
        name: "t10k-labels-idx1-ubyte.gz",
        check: Check::Unpacked("15d484375f8d13e6eb1aabb0c3f46965"),
    },
];

/// Only the archive's checksum is published for CIFAR-10.
const CIFAR: [Remote; 1] = [Remote {
    name: "cifar-10-binary.tar.gz",
    check: Check::Raw("c32a1d4ab5d03f1284b67883e8d87530"),
}];

impl Known {
    /// The canonical public URL prefix (file names are appended).
    pub fn default_base_url(self) -> &'static str {
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
}

/// Reports nothing.
pub struct Quiet;
impl FetchProgress for Quiet {}

/// Whether `path` passes its check.
fn verify(path: &Path, check: &Check) -> Result<Verdict> {
    let (got, want, what) = match check {
        Check::Unpacked(want) => {
            use md5::{Digest, Md5};
            let bytes = read_maybe_gz(path)?;
            let got: String = Md5::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            (got, *want, "unpacked md5")
        }
        Check::Raw(want) => (file_md5(path)?, *want, "md5"),
    };
    Ok(if got == want {
        Verdict::Verified
    } else {
        Verdict::Mismatch(format!("{what} {got}, expected {want}"))
    })
}

fn part_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// Downloads `url` into `part`, continuing a partial file when the server honours
/// `Range`. Returns the number of bytes received in this call.
fn download(
    agent: &ureq::Agent,
    url: &str,
    part: &Path,
    progress: &mut dyn FetchProgress,
) -> Result<u64> {
    let have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    let Some(resp) = request(agent, url, have)? else {
        // The partial file is already whole (or larger than the file): start over.
        std::fs::remove_file(part).map_err(|e| AntError::io(part, e))?;
        return download(agent, url, part, progress);
    };
    let resumed = resp.status() == 206;
    if have > 0 && !resumed {
        tracing::info!("{url}: server ignored Range, starting over");
    }
    let len: Option<u64> = resp.header("Content-Length").and_then(|v| v.parse().ok());
    let mut file = if resumed {
        OpenOptions::new().append(true).open(part)
    } else {
        File::create(part)
    }
    .map_err(|e| AntError::io(part, e))?;
    let start = if resumed { have } else { 0 };
    progress.download_started(&file_name(part), start, len.map(|l| l + start));
    let got = copy_body(
        &mut resp.into_reader(),
        &mut file,
        url,
        part,
        start,
        progress,
    )?;
    file.sync_all().map_err(|e| AntError::io(part, e))?;
    progress.download_ended();
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

/// A failed download of `url`.
fn download_error(url: &str, reason: String) -> AntError {
    AntError::Download {
        url: url.to_string(),
        reason,
    }
}

/// Sends the GET for `url`, asking for the bytes after the `have` already there.
/// `None`: the server refused that range (HTTP 416), so the partial file must go.
fn request(agent: &ureq::Agent, url: &str, have: u64) -> Result<Option<ureq::Response>> {
    let mut req = agent.get(url);
    if have > 0 {
        req = req.set("Range", &format!("bytes={have}-"));
    }
    match req.call() {
        Ok(r) => Ok(Some(r)),
        Err(ureq::Error::Status(416, _)) if have > 0 => Ok(None),
        Err(ureq::Error::Status(code, r)) => Err(download_error(
            url,
            format!("HTTP {code} {}", r.status_text()),
        )),
        // The URL is already the error's subject: report only what went wrong.
        Err(ureq::Error::Transport(t)) => {
            let detail = std::error::Error::source(&t)
                .map(|c| c.to_string())
                .or(t.message().map(str::to_string))
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            Err(download_error(url, format!("{}{detail}", t.kind())))
        }
    }
}

/// The file a `.part` path stands for, as progress reports name it.
fn file_name(part: &Path) -> String {
    part.file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".part").to_string())
        .unwrap_or_default()
}

/// Copies the response body into `file` (the `.part` file, which already holds
/// `start` bytes), reporting progress. Returns the number of bytes copied.
fn copy_body(
    reader: &mut dyn Read,
    file: &mut File,
    url: &str,
    part: &Path,
    start: u64,
    progress: &mut dyn FetchProgress,
) -> Result<u64> {
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    loop {
        let n = reader.read(&mut buf).map_err(|e| {
            download_error(
                url,
                format!("download interrupted after {} bytes: {e}", start + got),
            )
        })?;
        if n == 0 {
            return Ok(got);
        }
        file.write_all(&buf[..n])
            .map_err(|e| AntError::io(part, e))?;
        got += n as u64;
        progress.received(n as u64);
    }
}

/// Downloads and verifies every file of `set` into `dir` (`base_url` replaces the
/// canonical prefix). Files already there and verified are kept. CIFAR-10's archive
/// is unpacked into `dir` (giving `cifar-10-batches-bin/`).
pub fn fetch(
    set: Known,
    dir: &Path,
    base_url: Option<&str>,
    progress: &mut dyn FetchProgress,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| AntError::io(dir, e))?;
    let base = base_url.unwrap_or(set.default_base_url());
    let sep = if base.ends_with('/') { "" } else { "/" };
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(30))
        .timeout_read(Duration::from_secs(60))
        .build();
    for f in set.files() {
        let path = dir.join(f.name);
        if path.is_file() {
            if let Verdict::Verified = verify(&path, &f.check)? {
                progress.step(&path, Step::Present);
                continue;
            }
            // A bad file in place would be taken as good by the loaders.
            std::fs::remove_file(&path).map_err(|e| AntError::io(&path, e))?;
        }
        let url = format!("{base}{sep}{}", f.name);
        let part = part_path(&path);
        download(&agent, &url, &part, progress)?;
        if let Verdict::Mismatch(why) = verify(&part, &f.check)? {
            std::fs::remove_file(&part).map_err(|e| AntError::io(&part, e))?;
            return Err(AntError::data(
                &path,
                format!("checksum mismatch ({why}) for {url}; the download was removed"),
            ));
        }
        std::fs::rename(&part, &path).map_err(|e| AntError::io(&path, e))?;
        progress.step(&path, Step::Downloaded);
    }
    if set == Known::Cifar10 {
        let archive = dir.join(CIFAR[0].name);
        let file = File::open(&archive).map_err(|e| AntError::io(&archive, e))?;
        tar::Archive::new(flate2::read::GzDecoder::new(file))
            .unpack(dir)
            .map_err(|e| AntError::data(&archive, format!("cannot unpack: {e}")))?;
        progress.step(&dir.join("cifar-10-batches-bin"), Step::Unpacked);
    }
    Ok(())
}
