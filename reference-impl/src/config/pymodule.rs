//! Agent modules (seed 001: `agents.<name>.module`, "Importable Python module path containing a
//! `fast` instance"): the agent definition read from the literal keyword arguments of the
//! module's `@fast.agent(...)` decorator.
//!
//! The reader is small and strict. It does not run Python: it finds `fast = FastAgent(...)` and the
//! `@fast.agent(...)` decorator, and reads the decorator's arguments when they are literals —
//! strings (adjacent ones concatenate), numbers, `True`/`False`/`None`, lists, tuples, dicts and
//! calls such as `RequestParams(temperature=0.6)` whose arguments are themselves literals. Anything
//! else (a variable, an f-string, an expression) is an error naming its file and line. The
//! arguments are rewritten as a YAML flow mapping that keeps every value on its source line, so the
//! card's own parser (and its `file:line:col` errors) reads them.

use super::error::{ConfigError, Position};
use super::source::SourceFile;

const HINT: &str = "write the agent as the seed's example does: `fast = FastAgent(\"Name\")` and \
`@fast.agent(name=\"…\", instruction=\"…\", servers=[…], model=\"…\")` with literal values";

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Num(String),
    Name(String),
    Punct(char),
    End,
}

struct Lexer<'a> {
    src: &'a SourceFile,
    chars: Vec<char>,
    i: usize,
    line: usize,
    col: usize,
}

impl<'a> Lexer<'a> {
    fn err(&self, line: usize, col: usize, msg: impl Into<String>) -> ConfigError {
        self.src
            .error_at(
                Some(Position {
                    line,
                    column: col.max(1),
                }),
                msg,
            )
            .with_hint(HINT)
    }

    fn bump(&mut self) -> Option<char> {
        let c = *self.chars.get(self.i)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn peek(&self, n: usize) -> Option<char> {
        self.chars.get(self.i + n).copied()
    }

    /// The next token and the line/column it starts at.
    fn next(&mut self) -> Result<(Tok, usize, usize), ConfigError> {
        loop {
            match self.peek(0) {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('\\') if self.peek(1) == Some('\n') => {
                    self.bump();
                    self.bump();
                }
                Some('#') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                _ => break,
            }
        }
        let (line, col) = (self.line, self.col);
        let Some(c) = self.peek(0) else {
            return Ok((Tok::End, line, col));
        };
        if "()[]{},=:".contains(c) {
            self.bump();
            return Ok((Tok::Punct(c), line, col));
        }
        if c.is_ascii_digit() || (c == '-' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) {
            let mut s = String::new();
            s.push(c);
            self.bump();
            while let Some(d) = self.peek(0) {
                let sign = matches!(d, '-' | '+') && s.ends_with(['e', 'E']);
                if !(d.is_ascii_alphanumeric() || d == '.' || d == '_' || sign) {
                    break;
                }
                s.push(d);
                self.bump();
            }
            let s = s.replace('_', "");
            if s.parse::<f64>().is_err() {
                return Err(self.err(
                    line,
                    col,
                    format!("`{s}` is not a number this reader knows"),
                ));
            }
            return Ok((Tok::Num(s), line, col));
        }
        if c.is_alphabetic() || c == '_' {
            let mut s = String::new();
            while let Some(d) = self
                .peek(0)
                .filter(|d| d.is_alphanumeric() || *d == '_' || *d == '.')
            {
                s.push(d);
                self.bump();
            }
            let lower = s.to_ascii_lowercase();
            if matches!(self.peek(0), Some('"' | '\'')) && matches!(lower.as_str(), "r" | "u") {
                return self.string(line, col, lower == "r");
            }
            if matches!(self.peek(0), Some('"' | '\'')) {
                return Err(self.err(
                    line,
                    col,
                    format!("a `{s}`-prefixed string is not a literal this reader evaluates"),
                ));
            }
            return Ok((Tok::Name(s), line, col));
        }
        if c == '"' || c == '\'' {
            return self.string(line, col, false);
        }
        Err(self.err(
            line,
            col,
            format!("unexpected `{c}` in the decorator's arguments"),
        ))
    }

    fn string(
        &mut self,
        line: usize,
        col: usize,
        raw: bool,
    ) -> Result<(Tok, usize, usize), ConfigError> {
        let q = self.bump().unwrap_or('"');
        let triple = self.peek(0) == Some(q) && self.peek(1) == Some(q);
        if triple {
            self.bump();
            self.bump();
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(self.err(line, col, "this string is never closed"));
            };
            if c == q {
                if !triple {
                    break;
                }
                if self.peek(0) == Some(q) && self.peek(1) == Some(q) {
                    self.bump();
                    self.bump();
                    break;
                }
                out.push(c);
                continue;
            }
            if c == '\n' && !triple {
                return Err(self.err(line, col, "this string is never closed on its line"));
            }
            if c != '\\' || raw {
                out.push(c);
                continue;
            }
            let Some(e) = self.bump() else {
                return Err(self.err(line, col, "this string is never closed"));
            };
            match e {
                '\n' => {}
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '\'' | '"' => out.push(e),
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = (0..n).filter_map(|_| self.bump()).collect();
                    let ch = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    match ch {
                        Some(ch) => out.push(ch),
                        None => {
                            return Err(self.err(
                                line,
                                col,
                                format!("`\\{e}{hex}` is not a character"),
                            ));
                        }
                    }
                }
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
        Ok((Tok::Str(out), line, col))
    }
}

/// Rewrites literal arguments as YAML flow text, each value on its source line.
struct Writer<'a> {
    lex: Lexer<'a>,
    out: String,
    out_line: usize,
    tok: (Tok, usize, usize),
}

impl Writer<'_> {
    fn advance(&mut self) -> Result<(), ConfigError> {
        self.tok = self.lex.next()?;
        Ok(())
    }

    /// Emits `text` on `line` (newlines first, so positions match the source).
    fn emit(&mut self, line: usize, text: &str) {
        while self.out_line < line {
            self.out.push_str("\n ");
            self.out_line += 1;
        }
        self.out.push_str(text);
    }

    fn expect(&mut self, c: char) -> Result<(), ConfigError> {
        if self.tok.0 != Tok::Punct(c) {
            return Err(self.lex.err(
                self.tok.1,
                self.tok.2,
                format!("expected `{c}` in the decorator's arguments"),
            ));
        }
        self.advance()
    }

    fn value(&mut self) -> Result<(), ConfigError> {
        let (tok, line, col) = self.tok.clone();
        match tok {
            Tok::Str(mut s) => {
                self.advance()?;
                while let Tok::Str(more) = &self.tok.0 {
                    s.push_str(more);
                    self.advance()?;
                }
                let json = serde_json::to_string(&s).unwrap_or_default();
                self.emit(line, &json);
            }
            Tok::Num(n) => {
                self.emit(line, &n);
                self.advance()?;
            }
            Tok::Name(n) if matches!(n.as_str(), "True" | "False" | "None") => {
                let v = match n.as_str() {
                    "True" => "true",
                    "False" => "false",
                    _ => "null",
                };
                self.emit(line, v);
                self.advance()?;
            }
            Tok::Name(n) => {
                self.advance()?;
                if self.tok.0 != Tok::Punct('(') {
                    return Err(self.lex.err(
                        line,
                        col,
                        format!(
                            "`{n}` is a name, not a literal: the agent module is read, not run"
                        ),
                    ));
                }
                self.advance()?;
                self.call_args(line, ')', false)?;
            }
            Tok::Punct('[') => {
                self.advance()?;
                self.sequence(line, ']')?;
            }
            Tok::Punct('(') => {
                self.advance()?;
                self.sequence(line, ')')?;
            }
            Tok::Punct('{') => {
                self.advance()?;
                self.emit(line, "{");
                let mut first = true;
                while self.tok.0 != Tok::Punct('}') {
                    if !first {
                        self.emit(self.tok.1, ", ");
                    }
                    first = false;
                    self.value()?;
                    self.expect(':')?;
                    self.emit(self.tok.1, ": ");
                    self.value()?;
                    if self.tok.0 == Tok::Punct(',') {
                        self.advance()?;
                    }
                }
                self.emit(self.tok.1, "}");
                self.advance()?;
            }
            other => {
                let found = match other {
                    Tok::Punct(p) => format!("`{p}`"),
                    _ => "the end of the file".to_owned(),
                };
                return Err(self.lex.err(
                    line,
                    col,
                    format!("expected a literal value, found {found}"),
                ));
            }
        }
        Ok(())
    }

    fn sequence(&mut self, line: usize, close: char) -> Result<(), ConfigError> {
        self.emit(line, "[");
        let mut first = true;
        while self.tok.0 != Tok::Punct(close) {
            if !first {
                self.emit(self.tok.1, ", ");
            }
            first = false;
            self.value()?;
            if self.tok.0 == Tok::Punct(',') {
                self.advance()?;
            } else if self.tok.0 != Tok::Punct(close) {
                return Err(self.lex.err(
                    self.tok.1,
                    self.tok.2,
                    format!("expected `,` or `{close}`"),
                ));
            }
        }
        self.emit(self.tok.1, "]");
        self.advance()
    }

    /// `name=value, …)` as a flow mapping; `positional` names the decorator's first two
    /// positional arguments (`name`, `instruction`).
    fn call_args(&mut self, line: usize, close: char, positional: bool) -> Result<(), ConfigError> {
        self.emit(line, "{");
        let mut first = true;
        let mut index = 0;
        while self.tok.0 != Tok::Punct(close) {
            let (tok, l, c) = self.tok.clone();
            if !first {
                self.emit(l, ", ");
            }
            first = false;
            let key = match tok {
                Tok::Name(k) if !k.contains('.') && self.lex.peek_is_eq() => {
                    self.advance()?;
                    self.expect('=')?;
                    k
                }
                _ if positional && index < 2 => {
                    index += 1;
                    if index == 1 { "name" } else { "instruction" }.to_owned()
                }
                _ => {
                    return Err(self
                        .lex
                        .err(l, c, "expected a keyword argument (`name=value`)"));
                }
            };
            self.emit(l, &format!("{key}: "));
            self.value()?;
            if self.tok.0 == Tok::Punct(',') {
                self.advance()?;
            } else if self.tok.0 != Tok::Punct(close) {
                return Err(self.lex.err(
                    self.tok.1,
                    self.tok.2,
                    format!("expected `,` or `{close}`"),
                ));
            }
        }
        self.emit(self.tok.1, "}");
        self.advance()
    }
}

impl Lexer<'_> {
    /// Whether the next non-space character is `=` (and not `==`).
    fn peek_is_eq(&self) -> bool {
        let mut j = self.i;
        while self.chars.get(j).is_some_and(|c| *c == ' ' || *c == '\t') {
            j += 1;
        }
        self.chars.get(j) == Some(&'=') && self.chars.get(j + 1) != Some(&'=')
    }
}

/// The `@fast.agent(...)` arguments of `src` as YAML (a flow mapping whose values sit on their
/// source lines). With several decorators, the one whose `name` is `key` is chosen.
pub(super) fn decorator_yaml(src: &SourceFile, key: &str) -> Result<String, ConfigError> {
    let at = |line: usize, msg: String| {
        src.error_at(Some(Position { line, column: 1 }), msg)
            .with_hint(HINT)
    };
    let has_fast = src.text.lines().any(|l| {
        let t = l.trim_start();
        l.len() == t.len()
            && t.strip_prefix("fast")
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('='))
                .is_some_and(|r| !r.starts_with('=') && r.contains("FastAgent("))
    });
    if !has_fast {
        return Err(at(
            1,
            "the agent module holds no `fast = FastAgent(...)` instance".into(),
        ));
    }
    let mut found = Vec::new();
    let mut offset = 0;
    for (i, line) in src.text.split_inclusive('\n').enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("@fast.agent") {
            let open = rest.trim_start();
            if !open.starts_with('(') {
                return Err(at(
                    i + 1,
                    "`@fast.agent` must be called with its arguments".into(),
                ));
            }
            let skip = line.len() - open.len();
            found.push((i + 1, offset + skip + 1, skip + 2));
        }
        offset += line.len();
    }
    if found.is_empty() {
        return Err(at(
            1,
            "the agent module has no `@fast.agent(...)` decorator".into(),
        ));
    }
    let mut parsed = Vec::new();
    for (line, byte, col) in found {
        let chars: Vec<char> = src.text[byte..].chars().collect();
        let mut w = Writer {
            lex: Lexer {
                src,
                chars,
                i: 0,
                line,
                col,
            },
            out: String::new(),
            out_line: 1,
            tok: (Tok::End, line, col),
        };
        w.advance()?;
        w.call_args(line, ')', true)?;
        let name_matches = serde_saphyr::from_str::<serde_json::Value>(&w.out)
            .ok()
            .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(|n| n == key))
            .unwrap_or(false);
        parsed.push((name_matches, w.out));
    }
    if parsed.len() == 1 {
        return Ok(parsed.swap_remove(0).1);
    }
    match parsed.into_iter().find(|(m, _)| *m) {
        Some((_, yaml)) => Ok(yaml),
        None => Err(at(
            1,
            format!("the module has several `@fast.agent` decorators and none is named `{key}`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::files::CardSpec;

    fn src(text: &str) -> SourceFile {
        SourceFile {
            path: "agents/jarvis.py".into(),
            text: text.to_owned(),
            line_offset: 0,
        }
    }

    const SEED: &str = "from fast_agent import FastAgent\nfrom fast_agent.types import RequestParams\nfast = FastAgent(\"Jeffrey\", parse_cli_args=False)\n@fast.agent(\n    name=\"jeffrey\",\n    instruction=\"\"\"You are\nJeffrey.\"\"\",\n    servers=[\"argos\", 'mnemosyne'],  # two\n    model=\"openai.kit-model\",\n    request_params=RequestParams(temperature=0.6, top_p=0.9),\n)\nasync def _jeffrey():\n    pass\n";

    #[test]
    fn the_seed_example_reads_as_a_card() {
        let s = src(SEED);
        let yaml = decorator_yaml(&s, "jeffrey").unwrap();
        let card: CardSpec = s.parse(&yaml, "").unwrap();
        assert_eq!(card.name.as_deref(), Some("jeffrey"));
        assert_eq!(card.instruction.as_deref(), Some("You are\nJeffrey."));
        let servers: Vec<&str> = card.servers.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(servers, ["argos", "mnemosyne"]);
        let model = card.model.unwrap();
        assert_eq!(model.value, "openai.kit-model");
        assert_eq!(s.position(&model.referenced).map(|p| p.line), Some(9));
        let rp = card.request_params.unwrap();
        assert_eq!((rp.temperature, rp.top_p), (Some(0.6), Some(0.9)));
    }

    #[test]
    fn positional_name_and_instruction_are_read() {
        let s = src(
            "fast = FastAgent(\"x\")\n@fast.agent(\"jarvis\", \"Be brief.\", servers=[])\nasync def a(): ...\n",
        );
        let card: CardSpec = s.parse(&decorator_yaml(&s, "jarvis").unwrap(), "").unwrap();
        assert_eq!(card.instruction.as_deref(), Some("Be brief."));
    }

    #[test]
    fn a_variable_is_an_error_at_its_line() {
        let s = src(
            "fast = FastAgent(\"x\")\nPROMPT = 'p'\n@fast.agent(\n  name=\"a\",\n  instruction=PROMPT,\n)\n",
        );
        let e = decorator_yaml(&s, "a").unwrap_err();
        assert_eq!(e.position.map(|p| p.line), Some(5), "{e}");
        assert!(e.message.contains("PROMPT"), "{e}");
    }

    #[test]
    fn a_module_without_fast_or_decorator_is_an_error() {
        let e = decorator_yaml(&src("@fast.agent(name='a')\n"), "a").unwrap_err();
        assert!(e.message.contains("FastAgent"), "{e}");
        let e = decorator_yaml(&src("fast = FastAgent('a')\n"), "a").unwrap_err();
        assert!(e.message.contains("decorator"), "{e}");
    }

    #[test]
    fn unknown_keywords_are_rejected_by_the_card_reader_at_their_line() {
        let s = src("fast = FastAgent('a')\n@fast.agent(\n name='a',\n servres=['x'],\n)\n");
        let e = s
            .parse::<CardSpec>(&decorator_yaml(&s, "a").unwrap(), "")
            .unwrap_err();
        assert_eq!(e.position.map(|p| p.line), Some(4), "{e}");
    }

    #[test]
    fn several_decorators_choose_the_agent_by_name() {
        let s = src(
            "fast = FastAgent('a')\n@fast.agent(name='a', instruction='A')\nasync def a(): ...\n@fast.agent(name='b', instruction='B')\nasync def b(): ...\n",
        );
        let card: CardSpec = s.parse(&decorator_yaml(&s, "b").unwrap(), "").unwrap();
        assert_eq!(card.instruction.as_deref(), Some("B"));
        assert!(decorator_yaml(&s, "c").is_err());
    }
}
