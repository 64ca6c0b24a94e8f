//! The images a generated message carries: real PNG, WebP and JPEG files (types the vision
//! models of both of the seeds' providers take), the PNGs and JPEGs each different from the
//! others, a message's one WebP the same tiny image.

use base64::Engine as _;
use serde_json::{Value, json};

/// Image `i` of a message, by `i % 3`: a real PNG (`i + 1` pixels wide, coloured from `bytes`), a
/// WebP ([`TINY_WEBP`]) or a JPEG (its density set to `i + 1`): types OpenAI's and Anthropic's
/// vision models both take, so a message of two images or more carries more than PNG.
pub(super) fn image_json((i, bytes): (usize, &Vec<u8>)) -> Value {
    let n = u16::try_from(i + 1).unwrap_or(1);
    let rgb = [0, 1, 2].map(|k| bytes.get(k).copied().unwrap_or(0));
    let (data, mime) = match i % 3 {
        0 => (png(n, rgb), "image/png"),
        1 => (
            base64::engine::general_purpose::STANDARD
                .decode(TINY_WEBP)
                .unwrap_or_default(),
            "image/webp",
        ),
        _ => (jpeg(n), "image/jpeg"),
    };
    json!({
        "data": base64::engine::general_purpose::STANDARD.encode(&data),
        "mime_type": mime,
    })
}

/// A 1×1 baseline JPEG (JFIF, quality 50).
const TINY_JPEG: &str = concat!(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1R",
    "V19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2Nj",
    "Y2NjY2NjY2NjY2NjY2P/wAARCAABAAEDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAA",
    "AgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6",
    "Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXG",
    "x8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREA",
    "AgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5",
    "OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPE",
    "xcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDIooorkPqD/9k=",
);

/// [`TINY_JPEG`] with its horizontal density (JFIF bytes 14–15) set to `density`.
fn jpeg(density: u16) -> Vec<u8> {
    let mut out = base64::engine::general_purpose::STANDARD
        .decode(TINY_JPEG)
        .unwrap_or_default();
    if let Some(d) = out.get_mut(14..16) {
        d.copy_from_slice(&density.to_be_bytes());
    }
    out
}

/// A 1×1 lossless WebP (VP8L), a message's one WebP.
const TINY_WEBP: &str = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==";

/// A `width`×1 RGB PNG of one colour (zlib stored block, no compression).
fn png(width: u16, rgb: [u8; 3]) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(0).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut raw = vec![0u8];
    for _ in 0..width {
        raw.extend_from_slice(&rgb);
    }
    let len = u16::try_from(raw.len()).unwrap_or(0);
    let mut z = vec![0x78, 0x01, 0x01];
    z.extend_from_slice(&len.to_le_bytes());
    z.extend_from_slice(&(!len).to_le_bytes());
    z.extend_from_slice(&raw);
    z.extend_from_slice(&adler32(&raw).to_be_bytes());
    let mut ihdr = u32::from(width).to_be_bytes().to_vec();
    ihdr.extend_from_slice(&1u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}
