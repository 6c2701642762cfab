//! Users' own image folders (`DIR/train/<class>/`, `DIR/test/<class>/`, or
//! `DIR/<class>/`): every format read by its bytes, grey and colour, class names from
//! the folders, predictions on image files, and one clear error for each kind of bad
//! folder.

use std::path::{Path, PathBuf};

use ant::data::source::load_source;
use image::{DynamicImage, GrayImage, ImageFormat, RgbImage, RgbaImage};

mod common;

use common::*;

/// A grey `w` x `h` image of class `c` (a bar whose place says the class), noise `k`.
fn grey(c: u32, k: u32, (w, h): (u32, u32)) -> GrayImage {
    GrayImage::from_fn(w, h, |x, y| {
        let bar = (x * 3 / w) == c;
        let noise = ((x * 7 + y * 13 + k * 31) % 17) as u8;
        image::Luma([if bar { 200 + noise } else { noise }])
    })
}

/// The colour version of [`grey`]: the class's bar in its own colour.
fn colour(c: u32, k: u32, size: (u32, u32)) -> RgbImage {
    let g = grey(c, k, size);
    RgbImage::from_fn(size.0, size.1, |x, y| {
        let v = g.get_pixel(x, y)[0];
        let mut p = [v / 4; 3];
        p[c as usize % 3] = v;
        image::Rgb(p)
    })
}

/// Writes `n` images of each of `classes` under `dir/<class>/`, as `format`.
fn write_class_folders(
    dir: &Path,
    classes: &[&str],
    n: u32,
    image: impl Fn(u32, u32) -> DynamicImage,
    format: ImageFormat,
) {
    for (c, name) in classes.iter().enumerate() {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        for k in 0..n {
            let p = folder.join(format!("{k:03}.{}", format.extensions_str()[0]));
            let img = image(c as u32, k);
            // GIF is written from RGBA (its encoder takes no greys); it holds the same pixels.
            let img = match format {
                ImageFormat::Gif => DynamicImage::ImageRgba8(img.to_rgba8()),
                _ => img,
            };
            img.save_with_format(&p, format).unwrap();
        }
    }
}

const CLASSES: [&str; 3] = ["left", "middle", "right"];

/// `train/` and `test/` folders of 16x16 grey or colour PNG images.
fn split_folder(dir: &Path, colour_images: bool) -> PathBuf {
    let root = dir.join("images");
    for (split, n) in [("train", 30), ("test", 8)] {
        let image = |c, k| match colour_images {
            true => DynamicImage::ImageRgb8(colour(c, k + n, (16, 16))),
            false => DynamicImage::ImageLuma8(grey(c, k + n, (16, 16))),
        };
        write_class_folders(&root.join(split), &CLASSES, n, image, ImageFormat::Png);
    }
    root
}

#[test]
fn a_colour_folder_trains_with_a_cifar_preset_and_predicts_with_class_names() {
    let d = tempfile::tempdir().unwrap();
    let root = split_folder(d.path(), true);
    let out = d.path().join("m");
    let o = ant_with(
        "train --preset cifar10-c --epochs-node 1 --refine-epochs 2 --max-depth 1",
        &["--data", s(&root), "--out", s(&out)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    assert_eq!(tree["class_names"], serde_json::json!(CLASSES), "{tree}");
    // The test images of one class folder, by file, with the class's name.
    let o = ant(&[
        "predict",
        "--model",
        s(&out),
        "--input",
        s(&root.join("test/right")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "row,file,prediction,p_left,p_middle,p_right,leaf"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 8);
    assert!(
        rows[0].starts_with(&format!("0,{},", root.join("test/right/000.png").display())),
        "{}",
        rows[0]
    );
    let named = rows
        .iter()
        .filter(|r| CLASSES.iter().any(|c| r.split(',').nth(2) == Some(c)))
        .count();
    assert_eq!(named, 8, "{text}");
    // One file, as JSON lines.
    let one = root.join("test/left/003.png");
    let o = ant(&[
        "predict",
        "--model",
        s(&out),
        "--input",
        s(&one),
        "--format",
        "jsonl",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(line["file"], s(&one));
    assert!(
        CLASSES.contains(&line["prediction"].as_str().unwrap()),
        "{line}"
    );
    // eval reads the folder's test/ images.
    let o = ant(&["eval", "--model", s(&out), "--data", s(&root), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["test_samples"], 24, "{report}");
}

#[test]
fn every_image_format_is_read_by_its_bytes_not_its_name() {
    let d = tempfile::tempdir().unwrap();
    let image = |c, k| DynamicImage::ImageLuma8(grey(c, k, (12, 10)));
    let png = d.path().join("png");
    write_class_folders(&png, &CLASSES, 4, image, ImageFormat::Png);
    let want = load_source(&png, None, 0.25, 0, None, None).unwrap();
    assert_eq!(want.train.sample_shape(), &vec![1, 10, 12]);
    for format in [
        ImageFormat::Jpeg,
        ImageFormat::Bmp,
        ImageFormat::Gif,
        ImageFormat::Tiff,
        ImageFormat::WebP,
    ] {
        let dir = d.path().join(format!("{format:?}"));
        write_class_folders(&dir, &CLASSES, 4, image, format);
        // Endings that say nothing: the bytes decide.
        for p in walk(&dir) {
            std::fs::rename(&p, p.with_extension("data")).unwrap();
        }
        let got = load_source(&dir, None, 0.25, 0, None, None).unwrap();
        assert_eq!(got.train.sample_shape(), &vec![1, 10, 12], "{format:?}");
        assert_eq!(
            got.class_names.as_deref(),
            Some(&CLASSES.map(String::from)[..]),
            "{format:?}"
        );
        let (a, b) = (got.train.x(), want.train.x());
        let worst = a
            .iter()
            .zip(b.iter())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        // JPEG is lossy; the others give the same pixels.
        let bound = if format == ImageFormat::Jpeg {
            0.2
        } else {
            0.0
        };
        assert!(worst <= bound, "{format:?}: pixels differ by {worst}");
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        match e.path().is_dir() {
            true => out.extend(walk(&e.path())),
            false => out.push(e.path()),
        }
    }
    out
}

#[test]
fn grey_images_give_one_channel_colour_three_and_a_mixed_folder_is_colour() {
    let d = tempfile::tempdir().unwrap();
    let grey_dir = d.path().join("grey");
    write_class_folders(
        &grey_dir,
        &CLASSES,
        3,
        |c, k| DynamicImage::ImageLuma8(grey(c, k, (8, 8))),
        ImageFormat::Png,
    );
    let g = load_source(&grey_dir, None, 0.3, 0, None, None).unwrap();
    assert_eq!(g.train.sample_shape(), &vec![1, 8, 8]);
    // One colour image among grey ones: all read as colour, the grey ones in all three
    // channels.
    let mixed = d.path().join("mixed");
    write_class_folders(
        &mixed,
        &CLASSES,
        3,
        |c, k| DynamicImage::ImageLuma8(grey(c, k, (8, 8))),
        ImageFormat::Png,
    );
    colour(1, 9, (8, 8))
        .save(mixed.join("middle/zzz.png"))
        .unwrap();
    let m = load_source(&mixed, None, 0.3, 0, None, None).unwrap();
    assert_eq!(m.train.sample_shape(), &vec![3, 8, 8]);
    let all = m.train.len() + m.test.len();
    assert_eq!(all, 10);
    // Alpha is dropped.
    let rgba = d.path().join("rgba");
    write_class_folders(
        &rgba,
        &CLASSES,
        3,
        |c, k| {
            DynamicImage::ImageRgba8(RgbaImage::from_fn(8, 8, |x, y| {
                image::Rgba([
                    (x * 30) as u8,
                    (y * 30) as u8,
                    (c * 80) as u8,
                    (k * 60) as u8,
                ])
            }))
        },
        ImageFormat::Png,
    );
    let r = load_source(&rgba, None, 0.3, 0, None, None).unwrap();
    assert_eq!(r.train.sample_shape(), &vec![3, 8, 8]);
    // Said once each, on the command line, also where train/ and test/ both hold them.
    let split = d.path().join("split");
    for part in ["train", "test"] {
        for class in std::fs::read_dir(&rgba).unwrap().flatten() {
            let to = split.join(part).join(class.file_name());
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(class.path()).unwrap().flatten() {
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
        }
    }
    for (dir, said) in [
        (&mixed, "greyscale and 1 colour images"),
        (&rgba, "alpha channel"),
        (&split, "alpha channel"),
    ] {
        let o = ant_with(
            "train --preset cifar10-c --epochs-node 1 --refine-epochs 1 --max-depth 0",
            &["--data", s(dir), "--out", s(&d.path().join("m"))],
        );
        let e = stderr(&o);
        assert_eq!(e.matches(said).count(), 1, "{e}");
        std::fs::remove_dir_all(d.path().join("m")).ok();
    }
}

/// Runs `ant train` on `data` and asserts one clean error naming each needle, and that
/// nothing was written.
fn refused(data: &Path, needles: &[&str]) {
    let out = data.parent().unwrap().join("never");
    let o = ant_with(
        "train --preset mnist-c --epochs-node 1 --refine-epochs 1",
        &["--data", s(data), "--out", s(&out)],
    );
    assert_clean_error(&o, needles);
    assert!(!out.exists(), "{} was written", out.display());
}

#[test]
fn each_kind_of_bad_image_folder_is_one_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let good = |name: &str| {
        let root = d.path().join(name);
        write_class_folders(
            &root,
            &CLASSES,
            3,
            |c, k| DynamicImage::ImageLuma8(grey(c, k, (8, 8))),
            ImageFormat::Png,
        );
        root
    };
    // A truncated image.
    let root = good("cut");
    let p = root.join("left/001.png");
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    refused(&root, &["left/001.png", "cut short or damaged"]);
    // A file that is no image in a class folder; hidden files are skipped.
    let root = good("notes");
    std::fs::write(root.join("middle/.DS_Store"), "junk").unwrap();
    std::fs::write(root.join("middle/readme.png"), "not an image").unwrap();
    refused(&root, &["middle/readme.png", "is not an image"]);
    // An empty class folder.
    let root = good("empty");
    std::fs::create_dir(root.join("zebra")).unwrap();
    refused(&root, &["zebra", "holds no image"]);
    // A single class.
    let root = d.path().join("single");
    write_class_folders(
        &root,
        &["only"],
        3,
        |c, k| DynamicImage::ImageLuma8(grey(c, k, (8, 8))),
        ImageFormat::Png,
    );
    refused(&root, &["one class folder (only)", "at least 2"]);
    // A test class the training images lack.
    let root = d.path().join("split");
    for split in ["train", "test"] {
        write_class_folders(
            &root.join(split),
            &CLASSES,
            3,
            |c, k| DynamicImage::ImageLuma8(grey(c, k, (8, 8))),
            ImageFormat::Png,
        );
    }
    std::fs::rename(root.join("test/right"), root.join("test/far")).unwrap();
    refused(
        &root,
        &["test/far", "a class the training images do not have"],
    );
    // Images of two sizes: both named.
    let root = good("sizes");
    grey(0, 9, (9, 8)).save(root.join("left/big.png")).unwrap();
    refused(&root, &["big.png", "9x8", "8x8", "--image-size"]);
    // A file beside the class folders.
    let root = good("loose");
    grey(0, 9, (8, 8)).save(root.join("stray.png")).unwrap();
    refused(&root, &["stray.png", "beside the class folders"]);
    // A loop of links.
    #[cfg(unix)]
    {
        let root = good("loop");
        std::os::unix::fs::symlink("..", root.join("left/back")).unwrap();
        refused(&root, &["left/back", "loop"]);
        // A name that is not UTF-8.
        use std::os::unix::ffi::OsStrExt;
        let root = good("bytes");
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.png");
        grey(0, 9, (8, 8))
            .save_with_format(root.join("left").join(name), ImageFormat::Png)
            .unwrap();
        refused(&root, &["not UTF-8"]);
    }
    // A header that claims more pixels than memory holds: refused before decoding.
    let root = good("huge");
    let mut png = std::fs::read(root.join("left/000.png")).unwrap();
    // IHDR's width and height (bytes 16..24), then its CRC (24..28).
    png[16..20].copy_from_slice(&1_000_000u32.to_be_bytes());
    png[20..24].copy_from_slice(&1_000_000u32.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    for k in 0..3 {
        std::fs::write(root.join(format!("right/{k:03}.png")), &png).unwrap();
    }
    refused(&root, &["huge"]);
}

/// CRC-32 (PNG's) of `bytes`.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn images_of_several_sizes_are_resized_to_the_image_size_given_and_so_are_later_ones() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sizes");
    // Training images of two sizes, colour and grey; test images of a third.
    for (split, n, size) in [("train", 12, (16, 12)), ("test", 4, (9, 7))] {
        let image = |c, k| match k % 2 {
            0 => DynamicImage::ImageRgb8(colour(c, k, size)),
            _ => DynamicImage::ImageRgb8(colour(c, k, (size.0 * 2, size.1 + 3))),
        };
        write_class_folders(&root.join(split), &CLASSES, n, image, ImageFormat::Png);
    }
    let out = d.path().join("m");
    let train = "train --preset cifar10-c --epochs-node 1 --refine-epochs 1 --max-depth 1";
    // Without the flag: two files of different sizes and the flag, named.
    let o = ant_with(train, &["--data", s(&root), "--out", s(&out)]);
    assert_clean_error(&o, &["--image-size", "000.png", "001.png"]);
    assert!(!out.exists());
    for bad in ["16", "0x4", "4x", "ax4"] {
        let o = ant_with(
            train,
            &["--data", s(&root), "--out", s(&out), "--image-size", bad],
        );
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("HxW"), "{bad}: {}", stderr(&o));
    }
    let o = ant_with(
        train,
        &["--data", s(&root), "--out", s(&out), "--image-size", "10x8"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    assert_eq!(tree["provenance"]["image_size"], "10x8", "{tree}");
    assert_eq!(tree["topology"]["input"]["Image"]["h"], 10, "{tree}");
    assert_eq!(tree["topology"]["input"]["Image"]["w"], 8, "{tree}");
    // eval and predict resize the test images (9x7) as training did.
    let o = ant(&["eval", "--model", s(&out), "--data", s(&root), "--json"]);
    assert_eq!(json_of(&o)["test_samples"], 12);
    // Several inputs: two files and a folder, in the order given.
    let (a, b) = (
        root.join("test/left/001.png"),
        root.join("test/right/000.png"),
    );
    let rows = predictions(&ant(&[
        "predict",
        "--model",
        s(&out),
        "--input",
        s(&a),
        s(&b),
        s(&root.join("test/middle")),
    ]));
    assert_eq!(rows.len(), 6);
    assert!(
        rows[0].starts_with(&format!("0,{},", a.display())),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with(&format!("1,{},", b.display())),
        "{}",
        rows[1]
    );
    // A table among image inputs is refused by name.
    let csv = cls_csv(d.path());
    let o = ant(&["predict", "--model", s(&out), "--input", s(&a), s(&csv)]);
    assert_clean_error(&o, &["cls.csv", "not an image"]);
    // The flag is for image folders only.
    let o = ant_with(
        &format!("{QUICK} --target y --task classification --image-size 4x4"),
        &["--data", s(&csv), "--out", s(&out.with_extension("t"))],
    );
    assert_clean_error(&o, &["cls.csv", "--image-size"]);
}

#[test]
fn a_val_folder_is_the_validation_rows() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("hf");
    for (split, n) in [("train", 20), ("val", 5), ("test", 4)] {
        let image = |c, k| DynamicImage::ImageLuma8(grey(c, k + n, (12, 12)));
        write_class_folders(&root.join(split), &CLASSES, n, image, ImageFormat::Png);
    }
    let out = d.path().join("m");
    let train = "train --preset mnist-c --epochs-node 1 --refine-epochs 1 --max-depth 1";
    ok(&ant_with(train, &["--data", s(&root), "--out", s(&out)]));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    let p = &tree["provenance"];
    assert_eq!(p["valid_split"]["kind"], "own_files", "{p}");
    assert_eq!(
        (p["n_train"].as_u64(), p["n_valid"].as_u64()),
        (Some(60), Some(15)),
        "{p}"
    );
    // prune rebuilds the same validation rows from the folder.
    let pruned = d.path().join("p");
    ok(&ant(&[
        "prune",
        "--model",
        s(&out),
        "--data",
        s(&root),
        "--min-reach",
        "0.01",
        "--out",
        s(&pruned),
    ]));
    // With --train-limit the val/ images stay the validation rows.
    let limited = d.path().join("l");
    ok(&ant_with(
        &format!("{train} --train-limit 30"),
        &["--data", s(&root), "--out", s(&limited)],
    ));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(limited.join("tree.json")).unwrap()).unwrap();
    let p = &tree["provenance"];
    assert_eq!(
        (p["n_train"].as_u64(), p["n_valid"].as_u64()),
        (Some(30), Some(15)),
        "{p}"
    );
    // A val/ without test/ beside it is refused: test images would come from train/.
    std::fs::remove_dir_all(root.join("test")).unwrap();
    let o = ant_with(
        train,
        &["--data", s(&root), "--out", s(&d.path().join("n"))],
    );
    assert_clean_error(&o, &["val", "test/"]);
}
