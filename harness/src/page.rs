//! What every HTML page of the kit shares, the report and the compliance matrix alike: the
//! stylesheet and the escaping of text. A leaf: it names nothing else of the crate.

/// The reports' stylesheet (the compliance matrix page shares it).
pub(crate) const STYLE: &str = r#"
:root { --fg: #1d2330; --muted: #5b6474; --line: #d9dde5; --bg: #fff; --alt: #f6f7f9;
  --pass: #1a7f37; --fail: #c62828; --warn: #a15c00; --info: #3558c4; --incon: #6f42c1;
  --skip: #6b7280; --error: #9b1c5a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; padding: 1.5rem; max-width: 78rem; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; } h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--alt); border: 1px solid var(--line); padding: .5rem; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; margin: .3rem 0; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .45rem; text-align: left;
  vertical-align: top; }
th { background: var(--alt); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.run-verdict { font-size: 1.05rem; padding: .4rem .7rem; border-radius: 4px; display: inline-block; }
.run-verdict.ok { background: #e6f4ea; color: var(--pass); }
.run-verdict.bad { background: #fdecea; color: var(--fail); }
.run-verdict.incomplete { background: #fbeef5; color: var(--error); }
ul.counts { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .5rem; }
ul.counts li { border: 1px solid var(--line); border-radius: 4px; padding: .3rem .6rem; }
ul.counts .n { font-weight: 700; font-size: 1.1rem; margin-right: .25rem; }
.tag { font-weight: 600; }
.v-pass .tag, .c-pass .n { color: var(--pass); } .v-fail .tag, .c-fail .n { color: var(--fail); }
.v-warn .tag, .c-warn .n { color: var(--warn); } .v-info .tag, .c-info .n { color: var(--info); }
.v-inconclusive .tag, .c-inconclusive .n { color: var(--incon); }
.v-skip .tag, .c-skip .n { color: var(--skip); } .v-error .tag, .c-error .n { color: var(--error); }
.baselined .tag { color: var(--skip); }
#filters { display: flex; flex-wrap: wrap; gap: .8rem; margin-bottom: .6rem; }
#filters fieldset { border: 1px solid var(--line); border-radius: 4px; padding: .3rem .6rem; margin: 0; }
#filters legend { font-weight: 600; padding: 0 .3rem; }
#filters label { margin-right: .6rem; white-space: nowrap; }
details summary { cursor: pointer; color: var(--info); }
dl.ev { margin: .3rem 0; display: grid; grid-template-columns: max-content 1fr; gap: .1rem .6rem; }
dl.ev dt { color: var(--muted); } dl.ev dd { margin: 0; }
blockquote { margin: .3rem 0; padding: .2rem .6rem; border-left: 3px solid var(--line); color: var(--muted); }
.muted { color: var(--muted); }
tr[hidden] { display: none; }
"#;

/// Escapes text for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
