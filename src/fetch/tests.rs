use super::*;

#[test]
fn an_archive_is_unpacked_beside_then_moved_in_keeping_other_files() {
    let d = tempfile::tempdir().unwrap();
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, body) in [("top/a.bin", b"new a"), ("top/b.bin", b"new b")] {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append_data(&mut h, name, &body[..]).unwrap();
    }
    let archive = d.path().join("x.tar.gz");
    std::fs::write(&archive, tar.into_inner().unwrap().finish().unwrap()).unwrap();
    // Into a directory holding an older file of it and one of the user's.
    let top = d.path().join("top");
    std::fs::create_dir(&top).unwrap();
    std::fs::write(top.join("a.bin"), "old a").unwrap();
    std::fs::write(top.join("mine.txt"), "mine").unwrap();
    std::fs::create_dir(d.path().join(".unpack.999999999.tmp")).unwrap();
    unpack_into(&archive, d.path()).unwrap();
    assert_eq!(std::fs::read(top.join("a.bin")).unwrap(), b"new a");
    assert_eq!(std::fs::read(top.join("b.bin")).unwrap(), b"new b");
    assert_eq!(std::fs::read(top.join("mine.txt")).unwrap(), b"mine");
    let mut left: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["top", "x.tar.gz"]);
    // A directory that was not there appears whole.
    std::fs::remove_dir_all(&top).unwrap();
    unpack_into(&archive, d.path()).unwrap();
    assert_eq!(std::fs::read(top.join("a.bin")).unwrap(), b"new a");
}

#[test]
fn caps_fit_the_known_files() {
    for f in MNIST.iter().chain(&FASHION) {
        assert!(f.max_bytes() > f.size, "{}", f.name);
        assert!(
            f.max_bytes() < f.size + f.size / 100 + (1 << 20),
            "{}",
            f.name
        );
    }
    assert_eq!(CIFAR[0].max_bytes(), 170_052_171);
}

#[test]
fn unpacked_md5_streams_and_refuses_what_cannot_be() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(b"abc").unwrap();
    let gz = enc.finish().unwrap();
    std::fs::write(&p, &gz).unwrap();
    let md5_abc = "900150983cd24fb0d6963f7d28e17f72";
    assert_eq!(unpacked_md5(&p, 3).unwrap().unwrap(), md5_abc);
    let long = unpacked_md5(&p, 2).unwrap().unwrap_err();
    assert!(long.contains("more than the 2 bytes"), "{long}");
    std::fs::write(&p, &gz[..gz.len() - 5]).unwrap();
    let cut = unpacked_md5(&p, 3).unwrap().unwrap_err();
    assert!(cut.contains("cannot unpack"), "{cut}");
    std::fs::write(&p, b"abc").unwrap();
    assert_eq!(unpacked_md5(&p, 3).unwrap().unwrap(), md5_abc);
    std::fs::write(&p, b"").unwrap();
    assert_eq!(
        unpacked_md5(&p, 3).unwrap().unwrap(),
        "d41d8cd98f00b204e9800998ecf8427e"
    );
    let gone = unpacked_md5(&d.path().join("gone"), 3).unwrap_err();
    assert!(matches!(gone, AntError::Io { .. }));
}
