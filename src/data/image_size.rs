//! The size images of different sizes are resized to (`--image-size HxW`), and the
//! filter that resizes them: bilinear (the `image` crate's `Triangle`, whose reach
//! grows with the factor when shrinking), as torchvision's `Resize` does by default.

use std::fmt;
use std::str::FromStr;

use image::DynamicImage;
use image::imageops::FilterType;
use serde::{Deserialize, Serialize};

/// Height and width in pixels, written `HxW` (`28x28`), as torchvision's `(h, w)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ImageSize {
    pub height: u32,
    pub width: u32,
}

/// The filter's name, as the guide and the model's files say it.
pub const FILTER: &str = "bilinear";

/// The largest side taken: a typo of a few more digits would ask for gigabytes an image.
const MAX_SIDE: u32 = 1 << 14;

impl ImageSize {
    /// `image` at this size (itself when it already is).
    pub(crate) fn resize(&self, image: DynamicImage) -> DynamicImage {
        if (image.width(), image.height()) == (self.width, self.height) {
            return image;
        }
        image.resize_exact(self.width, self.height, FilterType::Triangle)
    }
}

impl FromStr for ImageSize {
    type Err = String;

    fn from_str(s: &str) -> Result<ImageSize, String> {
        let bad = || format!("{s:?} is not a size HxW (height x width in pixels, e.g. 32x32)");
        let (h, w) = s.trim().split_once(['x', 'X']).ok_or_else(bad)?;
        let side = |t: &str| {
            t.trim()
                .parse::<u32>()
                .ok()
                .filter(|v| (1..=MAX_SIDE).contains(v))
        };
        match (side(h), side(w)) {
            (Some(height), Some(width)) => Ok(ImageSize { height, width }),
            _ => Err(format!("{}; each side from 1 to {MAX_SIDE}", bad())),
        }
    }
}

impl fmt::Display for ImageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.height, self.width)
    }
}

impl TryFrom<String> for ImageSize {
    type Error = String;
    fn try_from(s: String) -> Result<ImageSize, String> {
        s.parse()
    }
}

impl From<ImageSize> for String {
    fn from(s: ImageSize) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_as_height_by_width() {
        let s: ImageSize = "32x48".parse().unwrap();
        assert_eq!((s.height, s.width), (32, 48));
        assert_eq!(s.to_string(), "32x48");
        assert_eq!(" 7X9 ".parse::<ImageSize>().unwrap().to_string(), "7x9");
        for bad in ["32", "0x5", "5x0", "x", "-1x4", "4x", "1x99999", "ax1"] {
            assert!(bad.parse::<ImageSize>().is_err(), "{bad}");
        }
    }

    #[test]
    fn resizing_keeps_grey_images_grey_and_a_plain_image_plain() {
        let grey = image::GrayImage::from_fn(10, 6, |x, y| image::Luma([(x * 20 + y) as u8]));
        let out = ImageSize {
            height: 3,
            width: 4,
        }
        .resize(DynamicImage::ImageLuma8(grey));
        assert_eq!((out.width(), out.height()), (4, 3));
        assert!(!out.color().has_color());
        let plain = image::RgbImage::from_pixel(8, 8, image::Rgb([10, 200, 30]));
        let out = ImageSize {
            height: 5,
            width: 3,
        }
        .resize(DynamicImage::ImageRgb8(plain));
        assert!(out.to_rgb8().pixels().all(|p| p.0 == [10, 200, 30]));
    }
}
