//! MD5 checksums of files and bytes: how `ant` tells its own files (the manifest) and a
//! model's data (provenance) by their content.

use std::io::Read;
use std::path::Path;

use crate::error::{AntError, Result};

/// Hex MD5 of the raw bytes of `path` (not decompressed).
pub(crate) fn file_md5(path: &Path) -> Result<String> {
    md5_of_first(path, u64::MAX).map_err(|e| AntError::io(path, e))
}

/// Hex MD5 of the first `len` bytes of the file `path` (all of a shorter one), read as
/// a stream.
pub(crate) fn md5_of_first(path: &Path, len: u64) -> std::io::Result<String> {
    md5_of_first_read(crate::os::open_to_read(path)?, len)
        .map_err(crate::os::waits_error)
}

/// [`md5_of_first`] of what `reader` reads from where it stands.
pub(crate) fn md5_of_first_read(reader: impl Read, len: u64) -> std::io::Result<String> {
    use md5::{Digest, Md5};
    let mut file = reader.take(len);
    let mut hasher = Md5::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// Hex MD5 of `bytes`.
pub fn md5_hex(bytes: &[u8]) -> String {
    use md5::{Digest, Md5};
    hex(&Md5::digest(bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_of_files_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(file_md5(&p).unwrap(), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        let e = file_md5(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(e, AntError::Io { .. }));
    }
}
