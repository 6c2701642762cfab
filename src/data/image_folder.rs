//! Folders of image files, one folder per class: the layout torchvision's `ImageFolder`,
//! Hugging Face's `imagefolder` and burn's `ImageFolderDataset` read.
//!
//! ```text
//! DIR/train/<class>/...   DIR/test/<class>/...     the training and test images
//! DIR/val/<class>/...      (or valid/, validation/)  the validation images, if any
//! DIR/<class>/...                                   all of them (a seeded test fraction)
//! ```
//!
//! Class names are the class folders' names in sorted order (as torchvision); a class
//! folder is read whole, its sub-folders too, in sorted order; hidden files (`.name`)
//! are skipped. A file is an image by its bytes, never its ending: PNG, JPEG, BMP,
//! GIF, TIFF or WebP. Greyscale images give one channel, colour ones three (alpha is
//! dropped, and said); a folder that mixes them is read as colour, the grey ones in
//! all three channels (said once). Every image of a data set has one size, or is
//! resized to `--image-size` ([`ImageSize`]). Pixels become values in 0..1, as IDX
//! and CIFAR-10 bytes do.
//!
//! Files are read and decoded on every core, once their headers have shown that the
//! decoded images fit in memory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};
use rayon::prelude::*;

use super::image_size::ImageSize;
use super::{Dataset, Targets};
use crate::error::{AntError, Result};

/// The folders of a split layout.
const TRAIN: &str = "train";
const TEST: &str = "test";
const VALID: [&str; 3] = ["val", "valid", "validation"];

/// The image formats read (their bytes say which).
const FORMATS: [ImageFormat; 6] = [
    ImageFormat::Png,
    ImageFormat::Jpeg,
    ImageFormat::Bmp,
    ImageFormat::Gif,
    ImageFormat::Tiff,
    ImageFormat::WebP,
];

/// Whether `dir` is laid out as an image folder: it holds a folder (not hidden) and no
/// IDX file, so that a directory of IDX files with a stray sub-folder is still IDX.
pub fn is_image_folder(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let (mut folders, mut idx) = (false, false);
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        idx |= name.starts_with("train-images") || name.starts_with("t10k-images");
        folders |= !name.starts_with('.') && e.path().is_dir();
    }
    folders && !idx
}

/// Whether `bytes` are an image of a format read here, whole enough that its header
/// parses (a table that starts `BM...` is no bitmap).
pub fn is_image(bytes: &[u8]) -> bool {
    let Ok(format) = image::guess_format(bytes) else {
        return false;
    };
    let reader = ImageReader::with_format(std::io::Cursor::new(bytes), format);
    FORMATS.contains(&format) && reader.into_dimensions().is_ok()
}

/// An image folder read: training images (then those of its `val/` folder, if it has
/// one, marked as the validation rows), the test images of its `test/` folder (if it
/// has one), the class names and a checksum of every file read (their paths and
/// bytes, in order).
pub struct Folder {
    pub train: Dataset,
    pub test: Option<Dataset>,
    pub class_names: Vec<String>,
    pub md5: String,
}

/// Reads the image folder `dir` for training: `train/`, `test/` and `val/`, or the
/// class folders of `dir` itself; images of other sizes resized to `size`.
pub fn load(dir: &Path, size: Option<ImageSize>) -> Result<Folder> {
    let train_dir = dir.join(TRAIN);
    let split = train_dir.is_dir();
    let valid_dir = VALID.iter().map(|v| dir.join(v)).find(|v| v.is_dir());
    if let Some(v) = &valid_dir {
        check_valid_layout(dir, v, split)?;
    }
    let root = if split { train_dir } else { dir.to_path_buf() };
    let classes = class_folders(&root)?;
    if classes.len() < 2 {
        let which = classes.first().map_or("no class folder".to_string(), |c| {
            format!("one class folder ({c})")
        });
        let msg = format!("holds {which}: classification needs at least 2 (one folder per class)");
        return Err(AntError::data(&root, msg));
    }
    let said = Said::default();
    let (mut train, mut md5) = read_classes(&root, &classes, &classes, (size, &said))?;
    if let Some(v) = valid_dir.filter(|_| split) {
        let (valid, valid_md5) = read_split(&v, &classes, (size, &said))?;
        train = train.followed_by_validation(valid)?;
        md5 = crate::store::checksum::md5_hex(format!("{md5} {valid_md5}").as_bytes());
    }
    let test_dir = dir.join(TEST);
    let test = match split && test_dir.is_dir() {
        true => Some(read_split(&test_dir, &classes, (size, &said))?.0),
        false => None,
    };
    Ok(Folder {
        train,
        test,
        class_names: classes,
        md5,
    })
}

/// A validation folder needs the split layout, and a `test/` beside it: test images
/// drawn from `train/` would be drawn from rows that are training and validation rows
/// alike.
fn check_valid_layout(dir: &Path, valid: &Path, split: bool) -> Result<()> {
    let msg = match (split, dir.join(TEST).is_dir()) {
        (true, true) => return Ok(()),
        (false, _) => {
            "is read as the validation images, which needs a train/ folder beside it (with test/)"
        }
        (true, false) => {
            "holds the validation images, so the test images go in a test/ folder beside it (or move val/ to test/)"
        }
    };
    Err(AntError::data(valid, msg))
}

/// The test images of `dir` for a model of the classes `classes`: its `test/` folder
/// when it has one, else every image (with a checksum of them, to find the model's
/// held-out rows).
pub fn load_test(
    dir: &Path,
    classes: Option<&[String]>,
    size: Option<ImageSize>,
) -> Result<(Dataset, Option<String>)> {
    let test_dir = dir.join(TEST);
    let root = match dir.join(TRAIN).is_dir() || test_dir.is_dir() {
        true => test_dir,
        false => dir.to_path_buf(),
    };
    let own = class_folders(&root)?;
    let classes = classes.map_or(own, <[String]>::to_vec);
    let (data, md5) = read_split(&root, &classes, (size, &Said::default()))?;
    Ok((data, (root == dir).then_some(md5)))
}

/// The images of the class folders of `root`, labelled by their class's place in
/// `classes` (a class folder `classes` lacks is refused).
fn read_split(
    root: &Path,
    classes: &[String],
    (size, said): (Option<ImageSize>, &Said),
) -> Result<(Dataset, String)> {
    let own = class_folders(root)?;
    if let Some(c) = own.iter().find(|c| !classes.contains(c)) {
        let msg = format!(
            "is a class the training images do not have (they have {})",
            classes.join(", ")
        );
        return Err(AntError::data(root.join(c), msg));
    }
    read_classes(root, &own, classes, (size, said))
}

/// The class folders of `root` (not hidden), in sorted order; a file beside them is
/// refused, as is a folder whose name is not UTF-8 (it would be a class name).
fn class_folders(root: &Path) -> Result<Vec<String>> {
    let mut names = vec![];
    for entry in sorted_entries(root)? {
        let name = utf8_name(&entry)?;
        if !entry.is_dir() {
            let msg =
                "is a file beside the class folders: every image goes into its class's folder";
            return Err(AntError::data(&entry, msg));
        }
        names.push(name);
    }
    Ok(names)
}

/// Reads the images of `own` class folders of `root`, labelled by their place in
/// `classes`, and the checksum of their paths and bytes.
fn read_classes(
    root: &Path,
    own: &[String],
    classes: &[String],
    (size, said): (Option<ImageSize>, &Said),
) -> Result<(Dataset, String)> {
    let mut files: Vec<(PathBuf, u32)> = vec![];
    for name in own {
        let label = classes.iter().position(|c| c == name).unwrap_or(0) as u32;
        let folder = root.join(name);
        let mut found = vec![];
        walk(&folder, &mut BTreeSet::new(), &mut found)?;
        if found.is_empty() {
            return Err(AntError::data(
                &folder,
                "holds no image: every class folder needs at least one",
            ));
        }
        files.extend(found.into_iter().map(|f| (f, label)));
    }
    let paths: Vec<PathBuf> = files.iter().map(|(f, _)| f.clone()).collect();
    let heads = heads(&paths)?;
    let (w, h) = match size {
        Some(s) => (s.width, s.height),
        None => one_size(&heads, &files)?,
    };
    let pixels = (files.len() as u64).saturating_mul(u64::from(w) * u64::from(h));
    check_decoding_fits(&heads, &paths, pixels, root)?;
    let images = decode_all(&paths, size)?;
    let colours: Vec<Colours> = images.iter().map(|(_, c, _)| *c).collect();
    let channels = channels(&colours, root, said);
    let md5 = folder_md5(root, &paths, &images);
    let (h, w) = (h as usize, w as usize);
    let x = planes(images, channels, pixels as usize * channels);
    let labels = files.iter().map(|(_, l)| *l).collect();
    let targets = Targets::Classes {
        labels,
        n_classes: classes.len(),
    };
    let data = Dataset::of_bytes(x, vec![channels, h, w], targets)?.with_class_names(classes);
    Ok((data, md5))
}

/// Every file under `dir`, its sub-folders read in sorted order; hidden entries are
/// skipped. `seen` holds the folders on the way down: a link back to one is a loop.
fn walk(dir: &Path, seen: &mut BTreeSet<PathBuf>, out: &mut Vec<PathBuf>) -> Result<()> {
    let real = std::fs::canonicalize(dir).map_err(|e| AntError::io(dir, e))?;
    if !seen.insert(real.clone()) {
        let msg = "is a link to a folder it is inside of (a loop of links)";
        return Err(AntError::data(dir, msg));
    }
    for entry in sorted_entries(dir)? {
        utf8_name(&entry)?;
        match std::fs::metadata(&entry) {
            Ok(m) if m.is_dir() => walk(&entry, seen, out)?,
            Ok(_) => out.push(entry),
            Err(e) if e.raw_os_error() == Some(40) => {
                return Err(AntError::data(&entry, "is a loop of links"));
            }
            Err(e) => return Err(AntError::io(&entry, e)),
        }
    }
    seen.remove(&real);
    Ok(())
}

/// The entries of `dir` but hidden ones, sorted by name.
fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = std::fs::read_dir(dir).map_err(|e| AntError::io(dir, e))?;
    let mut entries: Vec<PathBuf> = read
        .map(|e| e.map(|e| e.path()).map_err(|e| AntError::io(dir, e)))
        .collect::<Result<_>>()?;
    entries.retain(|p| {
        !p.file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
    });
    entries.sort();
    Ok(entries)
}

/// The file name of `path` as text: a name that is not UTF-8 is refused (a class is
/// named by its folder, and predictions by their file).
fn utf8_name(path: &Path) -> Result<String> {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(n) => Ok(n.to_string()),
        None => Err(AntError::data(
            path,
            "has a name that is not UTF-8: rename it",
        )),
    }
}

/// The warnings a data set's folders have said (`train/` and `test/` say each once).
#[derive(Default)]
struct Said(std::cell::RefCell<BTreeSet<&'static str>>);

impl Said {
    /// Whether `what` is said for the first time.
    fn first(&self, what: &'static str) -> bool {
        self.0.borrow_mut().insert(what)
    }
}

/// What an image's header says: its size.
struct Head {
    width: u32,
    height: u32,
}

/// Opens `path` as an image of a format read here.
fn reader(path: &Path, bytes: &[u8]) -> Result<ImageReader<std::io::Cursor<Vec<u8>>>> {
    let format = image::guess_format(bytes).ok().filter(|f| FORMATS.contains(f)).ok_or_else(|| {
        AntError::data(path, "is not an image (PNG, JPEG, BMP, GIF, TIFF or WebP, by its bytes): an image folder holds images only")
    })?;
    let mut reader = ImageReader::with_format(std::io::Cursor::new(bytes.to_vec()), format);
    // The sizes were checked against memory from the headers.
    reader.no_limits();
    Ok(reader)
}

/// The headers of `files`, read on every core; the first error in the files' order.
fn heads(files: &[PathBuf]) -> Result<Vec<Head>> {
    files
        .par_iter()
        .map(|f| head(f))
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}

/// The header of the image file `path`.
fn head(path: &Path) -> Result<Head> {
    let bytes = read_head(path)?;
    let decoder = reader(path, &bytes)?
        .into_decoder()
        .map_err(|e| bad_image(path, e))?;
    let (width, height) = decoder.dimensions();
    Ok(Head { width, height })
}

/// The first bytes of `path`, enough for any header read here (a TIFF's may lie
/// further: then the whole file).
fn read_head(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let file = crate::os::open_to_read(path).map_err(|e| AntError::io(path, e))?;
    let mut bytes = vec![];
    file.take(1 << 16)
        .read_to_end(&mut bytes)
        .map_err(|e| AntError::io(path, crate::os::waits_error(e)))?;
    if image::guess_format(&bytes).is_ok_and(|f| f == ImageFormat::Tiff) {
        return crate::os::read_file(path).map_err(|e| AntError::io(path, e));
    }
    Ok(bytes)
}

/// A decoding error, said as the file's problem.
fn bad_image(path: &Path, e: image::ImageError) -> AntError {
    AntError::data(
        path,
        format!("is not a readable image ({e}): it may be cut short or damaged"),
    )
}

/// What an image's pixels are: grey (every pixel's red, green and blue alike, as a
/// palette BMP or GIF of greys decodes), and whether any is not opaque.
#[derive(Clone, Copy)]
struct Colours {
    grey: bool,
    alpha: bool,
}

fn colours(image: &DynamicImage) -> Colours {
    let c = image.color();
    if !c.has_color() {
        let alpha = c.has_alpha() && image.to_luma_alpha8().pixels().any(|p| p[1] < 255);
        return Colours { grey: true, alpha };
    }
    let rgba = image.to_rgba8();
    Colours {
        grey: rgba.pixels().all(|p| p[0] == p[1] && p[1] == p[2]),
        alpha: c.has_alpha() && rgba.pixels().any(|p| p[3] < 255),
    }
}

/// The channels of a data set of images whose pixels are `colours`: 3 when any image
/// is in colour (said when some are grey), else 1. Transparency is dropped, and said.
fn channels(colours: &[Colours], root: &Path, said: &Said) -> usize {
    let colour = colours.iter().filter(|c| !c.grey).count();
    if colours.iter().any(|c| c.alpha) && said.first("alpha") {
        tracing::warn!(
            "{}: some images have an alpha channel (transparency), which is dropped",
            root.display()
        );
    }
    if colour > 0 && colour < colours.len() && said.first("mixed") {
        tracing::warn!(
            "{}: {} greyscale and {colour} colour images: all are read as colour (a grey image in all three channels)",
            root.display(),
            colours.len() - colour
        );
    }
    if colour > 0 { 3 } else { 1 }
}

/// The one size of the images (width, height), or an error naming two files of
/// different sizes.
fn one_size(heads: &[Head], files: &[(PathBuf, u32)]) -> Result<(u32, u32)> {
    let first = (heads[0].width, heads[0].height);
    match heads.iter().position(|h| (h.width, h.height) != first) {
        None => Ok(first),
        Some(i) => {
            let msg = format!(
                "is {}x{} (width x height), but {} is {}x{}: give --image-size HxW to resize them all (bilinear)",
                heads[i].width,
                heads[i].height,
                files[0].0.display(),
                first.0,
                first.1
            );
            Err(AntError::data(&files[i].0, msg))
        }
    }
}

/// Refuses images (`heads` of `files`) whose decoding into `pixels` kept pixels would not
/// fit in memory, naming `at` and the largest file: each image kept holds at most 4
/// bytes a pixel (RGBA) and its values 3 floats, and every core may be decoding one of
/// the largest at full size (a header claiming 65,500 x 65,500 is refused here, whatever
/// size it would be resized to).
fn check_decoding_fits(heads: &[Head], files: &[PathBuf], pixels: u64, at: &Path) -> Result<()> {
    let area = |h: &Head| u64::from(h.width) * u64::from(h.height);
    let Some(big) = (0..heads.len()).max_by_key(|&i| area(&heads[i])) else {
        return Ok(());
    };
    let cores = rayon::current_num_threads() as u64;
    let need = pixels
        .saturating_mul(4 + 12)
        .saturating_add(area(&heads[big]).saturating_mul(4 * 2).saturating_mul(cores));
    let what = format!(
        "decoding its images (the largest, {}, is {}x{})",
        files[big].display(),
        heads[big].width,
        heads[big].height
    );
    crate::os::check_file_fits(need, at, &what)
}

/// The image file `path` decoded (resized to `size`), and the MD5 of its bytes.
fn decode(path: &Path, size: Option<ImageSize>) -> Result<(DynamicImage, [u8; 16])> {
    use md5::{Digest, Md5};
    let bytes = crate::os::read_file(path).map_err(|e| AntError::io(path, e))?;
    let md5: [u8; 16] = Md5::digest(&bytes).into();
    let image = reader(path, &bytes)?
        .decode()
        .map_err(|e| bad_image(path, e))?;
    let image = match size {
        Some(s) => s.resize(image),
        None => image,
    };
    Ok((image, md5))
}

/// Decodes `files` on every core: each image, its colours and its file's MD5; the
/// first error in the files' order.
fn decode_all(
    files: &[PathBuf],
    size: Option<ImageSize>,
) -> Result<Vec<(DynamicImage, Colours, [u8; 16])>> {
    files
        .par_iter()
        .map(|f| decode(f, size).map(|(image, md5)| (colours(&image), image, md5)))
        .map(|r| r.map(|(c, image, md5)| (image, c, md5)))
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}

/// Interleaved (HWC) pixels of each image, as `channels` channels, to planes (CHW) of
/// bytes, as the modules read them (each standing for `byte / 255`).
fn planes(
    images: Vec<(DynamicImage, Colours, [u8; 16])>,
    channels: usize,
    values: usize,
) -> Vec<u8> {
    let mut x = Vec::with_capacity(values);
    for (image, _, _) in images {
        let p = match channels {
            1 => image.into_luma8().into_raw(),
            _ => image.into_rgb8().into_raw(),
        };
        for c in 0..channels {
            x.extend(p.iter().skip(c).step_by(channels));
        }
    }
    x
}

/// The checksum of an image folder's files: their paths (from `root`) and bytes.
fn folder_md5(
    root: &Path,
    files: &[PathBuf],
    images: &[(DynamicImage, Colours, [u8; 16])],
) -> String {
    let mut text = Vec::new();
    for (f, (_, _, md5)) in files.iter().zip(images) {
        text.extend_from_slice(
            f.strip_prefix(root)
                .unwrap_or(f)
                .as_os_str()
                .as_encoded_bytes(),
        );
        text.push(0);
        text.extend_from_slice(md5);
    }
    crate::store::checksum::md5_hex(&text)
}

/// The images `paths` for a model of `c` channels and `h` x `w` pixels (`predict`):
/// files, or folders read whole (sorted, hidden files skipped), resized to the model's
/// size when it was trained on resized images (`resize`). Returns the files read, in
/// order, with their samples.
pub fn load_files(
    paths: &[PathBuf],
    (c, h, w): (usize, usize, usize),
    resize: bool,
) -> Result<(Vec<PathBuf>, Vec<u8>)> {
    let mut files = vec![];
    for p in paths {
        match p.is_dir() {
            true => walk(p, &mut BTreeSet::new(), &mut files)?,
            false => files.push(p.clone()),
        }
    }
    if files.is_empty() {
        return Err(AntError::data(&paths[0], "holds no image"));
    }
    let heads = heads(&files)?;
    if let Some((f, hd)) = files
        .iter()
        .zip(&heads)
        .find(|(_, hd)| !resize && (hd.width as usize, hd.height as usize) != (w, h))
    {
        let msg = format!(
            "is {}x{} (width x height), but the model reads {w}x{h} images (trained without --image-size, it does not resize them)",
            hd.width, hd.height
        );
        return Err(AntError::data(f, msg));
    }
    let size = resize.then_some(ImageSize {
        height: h as u32,
        width: w as u32,
    });
    let pixels = (files.len() as u64).saturating_mul((h * w) as u64);
    check_decoding_fits(&heads, &files, pixels, &files[0])?;
    let images = decode_all(&files, size)?;
    if c == 1 && images.iter().any(|(_, colours, _)| !colours.grey) {
        tracing::warn!("colour images are read as greyscale: the model reads one channel");
    }
    let x = planes(images, c, pixels as usize * c);
    Ok((files, x))
}
