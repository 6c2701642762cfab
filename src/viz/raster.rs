//! SVG to PNG with resvg (usvg parses, tiny-skia rasterises).
//!
//! Text needs a font: the system's fonts are loaded through fontdb (fontconfig's
//! directories, then `/usr/share/fonts`), with DejaVu Sans preferred for the generic
//! `sans-serif`. Without any font the picture still renders, without its text.

use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

use crate::error::{AntError, Result};

/// The font database, loaded once per process.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        if db.is_empty() {
            for dir in ["/usr/share/fonts", "/usr/local/share/fonts"] {
                db.load_fonts_dir(dir);
            }
        }
        if db.is_empty() {
            tracing::warn!("no fonts found: PNG pictures will have no text");
        }
        let has = |name: &str| {
            db.faces()
                .any(|f| f.families.iter().any(|(n, _)| n == name))
        };
        for family in ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"] {
            if has(family) {
                db.set_sans_serif_family(family);
                break;
            }
        }
        Arc::new(db)
    })
    .clone()
}

/// Render `svg` to PNG bytes, `width` pixels wide (default: the SVG's own width); the
/// height keeps the aspect ratio.
pub fn svg_to_png(svg: &str, width: Option<u32>) -> Result<Vec<u8>> {
    let opt = usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt)
        .map_err(|e| AntError::render("parsing the SVG", e.to_string()))?;
    let size = tree.size();
    let w = width.unwrap_or(size.width().ceil() as u32).max(1);
    let scale = w as f32 / size.width();
    let h = ((size.height() * scale).round() as u32).max(1);
    // The pixels, and about as much again while the PNG is encoded.
    let bytes = u64::from(w) * u64::from(h) * 4 * 2;
    crate::os::check_fits(bytes, &format!("a {w} x {h} picture (--width {w})"))?;
    let mut pixmap = tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| AntError::param(format!("cannot make a {w}x{h} picture")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| AntError::render("encoding the PNG", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_svg_is_a_render_error() {
        let e = svg_to_png("<svg", None).unwrap_err();
        assert!(matches!(e, AntError::Render { .. }), "{e:?}");
        assert!(e.to_string().starts_with("parsing the SVG: "), "{e}");
    }
}
