//! Embeds the scenario suite (`scenarios/`, without `targets/`) into the crate: writes
//! `$OUT_DIR/embedded_suite.rs` with one `(relative path, text)` row per file, sorted by path, and
//! the suite's digest: the SHA-256 of the `sha256sum`-style manifest (`<sha256 hex>  <path>\n`
//! per file, paths `/`-separated and sorted bytewise), so that
//! `cd scenarios && find . -path ./targets -prune -o -type f -printf '%P\n' | LC_ALL=C sort |
//! xargs sha256sum | sha256sum` gives the same digest.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    println!("cargo::rerun-if-changed={}", dir.display());
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .map_err(std::io::Error::other)?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if rel == "targets" || rel.starts_with('.') || rel.contains("/.") {
            continue;
        }
        // `metadata` follows links: the workspace reaches the suite through one.
        if std::fs::metadata(&path)?.is_dir() {
            walk(root, &path, out)?;
        } else {
            println!("cargo::rerun-if-changed={}", path.display());
            out.push((rel, path));
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let root = manifest_dir.join("scenarios");
    let mut files = Vec::new();
    walk(&root, &root, &mut files)?;
    files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut manifest = String::new();
    let mut table = String::from(
        "/// The embedded suite: `(path relative to scenarios/, text)`, sorted by path.\n",
    );
    table.push_str("pub static FILES: &[(&str, &str)] = &[\n");
    for (rel, path) in &files {
        let bytes = std::fs::read(path)?;
        if std::str::from_utf8(&bytes).is_err() {
            return Err(format!("{} is not UTF-8 text", path.display()).into());
        }
        let _ = writeln!(manifest, "{}  {rel}", hex(&Sha256::digest(&bytes)));
        let abs = std::fs::canonicalize(path)?;
        let _ = writeln!(
            table,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        );
    }
    table.push_str("];\n");
    let digest = hex(&Sha256::digest(manifest.as_bytes()));
    println!("cargo::rustc-env=PALLAS_SUITE_DIGEST={digest}");
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("embedded_suite.rs");
    std::fs::write(out, table)?;
    Ok(())
}
