//! The badges: shields-style flat SVGs, "MCP agent bridge | LEVEL" and "Pallas | LEVEL", plain
//! SVG text in the system's Verdana/DejaVu Sans (no font fetched, no script, no external
//! reference).

use std::fmt::Write;

use super::levels::ConformanceLevel;
use crate::page::esc;

/// The left-hand text of the badge of the generic contract's level.
pub const BRIDGE_LABEL: &str = "MCP agent bridge";

/// The label of a Daedalus-side client's badge.
pub const CLIENT_LABEL: &str = "Daedalus client";

/// The left-hand text of the badge of the Pallas level.
pub const PALLAS_LABEL: &str = "Pallas";

/// The width of a text at 11 px Verdana, approximated per character (shields measures the
/// same font; 7 px for wide letters, 3.5 px for narrow ones, 6.5 px otherwise), plus padding.
fn width(text: &str) -> u32 {
    let tenths: u32 = text
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | 'f' | 't' | 'r' | ' ' | '.' | ',' | '|' | '\'' => 40,
            'm' | 'w' | 'M' | 'W' => 95,
            c if c.is_ascii_uppercase() => 75,
            _ => 66,
        })
        .sum();
    tenths.div_ceil(10) + 10
}

/// The badge of a level, `label` on its left.
pub fn svg(label: &str, level: ConformanceLevel) -> String {
    let value = level.as_str();
    let (lw, vw) = (width(label), width(value));
    let total = lw + vw;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total}\" height=\"20\" role=\"img\" aria-label=\"{label}: {value}\">\
<title>{label}: {value}</title>\
<linearGradient id=\"s\" x2=\"0\" y2=\"100%\"><stop offset=\"0\" stop-color=\"#bbb\" stop-opacity=\".1\"/><stop offset=\"1\" stop-opacity=\".1\"/></linearGradient>\
<clipPath id=\"r\"><rect width=\"{total}\" height=\"20\" rx=\"3\" fill=\"#fff\"/></clipPath>\
<g clip-path=\"url(#r)\"><rect width=\"{lw}\" height=\"20\" fill=\"#555\"/><rect x=\"{lw}\" width=\"{vw}\" height=\"20\" fill=\"{colour}\"/><rect width=\"{total}\" height=\"20\" fill=\"url(#s)\"/></g>\
<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,Geneva,DejaVu Sans,sans-serif\" font-size=\"11\">\
<text x=\"{lx}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{label}</text><text x=\"{lx}\" y=\"14\">{label}</text>\
<text x=\"{vx}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{value}</text><text x=\"{vx}\" y=\"14\">{value}</text>\
</g></svg>",
        label = esc(label),
        value = esc(value),
        colour = level.colour(),
        lx = f64::from(lw) / 2.0,
        vx = f64::from(lw) + f64::from(vw) / 2.0,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_badge_names_its_level_in_its_colour_and_fits_its_text() {
        let b = svg(BRIDGE_LABEL, ConformanceLevel::NotCompliant);
        assert!(
            b.contains("<title>MCP agent bridge: not compliant</title>"),
            "{b}"
        );
        assert!(b.contains("fill=\"#e05d44\""), "{b}");
        assert!(!b.contains("href") && !b.contains("@import") && !b.contains("<script"));
        assert!(width("not compliant") > width("core"));
        assert!(width(BRIDGE_LABEL) > width(PALLAS_LABEL));
        let full = svg(PALLAS_LABEL, ConformanceLevel::Full);
        assert!(
            full.contains(">full</text>")
                && full.contains(">Pallas</text>")
                && full.contains("fill=\"#4c1\""),
            "{full}"
        );
    }
}
