//! The leading plain selectors of a JSONPath (`.name`, `['name']`, `["name"]`, `[N]`), which
//! the runner follows in place in a received message before it builds anything.

use crate::client::JsonRef;

/// Follows the leading plain selectors of a JSONPath rest (`.name`, `['name']`, `["name"]`,
/// `[N]`) from `node` while they select something, and gives the node reached and the rest of
/// the path after them: the same nodes are selected from there.
pub(super) fn descend<'a, 'p>(mut node: JsonRef<'a>, mut rest: &'p str) -> (JsonRef<'a>, &'p str) {
    loop {
        let Some((next, after)) = plain_selector(rest).and_then(|(sel, after)| {
            let next = match sel {
                Selector::Name(name) => node.as_object()?.get(name)?,
                Selector::Index(i) => node.as_array()?.get(i)?,
            };
            Some((next, after))
        }) else {
            return (node, rest);
        };
        node = next;
        rest = after;
    }
}

/// Whether `rest`, where [`descend`] stopped, begins with a plain selector: one that selected
/// nothing there, so the whole path selects nothing (each later segment reads an empty list).
pub(super) fn missed(rest: &str) -> bool {
    plain_selector(rest).is_some()
}

enum Selector<'p> {
    Name(&'p str),
    Index(usize),
}

/// The first selector of `rest` when it is a plain name or a non-negative index.
fn plain_selector(rest: &str) -> Option<(Selector<'_>, &str)> {
    if rest.starts_with("..") {
        return None;
    }
    if let Some(r) = rest.strip_prefix('.') {
        return dot_name(r).map(|(name, after)| (Selector::Name(name), after));
    }
    let inner = rest.strip_prefix('[')?;
    for quote in ['\'', '"'] {
        if let Some(r) = inner.strip_prefix(quote) {
            let end = r.find(quote)?;
            let name = &r[..end];
            if name.contains('\\') {
                return None;
            }
            return Some((Selector::Name(name), r[end + 1..].strip_prefix(']')?));
        }
    }
    let end = inner.find(']')?;
    let digits = &inner[..end];
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    Some((Selector::Index(digits.parse().ok()?), &inner[end + 1..]))
}

/// A member name after a `.` (shorthand: letters, digits not first, `_`, any non-ASCII) and
/// the rest after it.
fn dot_name(r: &str) -> Option<(&str, &str)> {
    let end = r
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || !c.is_ascii()))
        .unwrap_or(r.len());
    let first = r.chars().next()?;
    if end == 0 || first.is_ascii_digit() {
        return None;
    }
    Some((&r[..end], &r[end..]))
}

/// The member a JSONPath selects first, when it begins with one (`$.name`, `$['name']`,
/// `$["name"]`), and the rest of the path after it; `None` for any other start (`$..`, `$.*`,
/// `$[0]`, a filter, blanks), which may reach every key.
pub(super) fn first_key(path: &str) -> Option<(&str, &str)> {
    match plain_selector(path.strip_prefix('$')?)? {
        (Selector::Name(name), rest) => Some((name, rest)),
        (Selector::Index(_), _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_first_member_only_when_it_starts_with_one() {
        assert_eq!(first_key("$.result.content"), Some(("result", ".content")));
        assert_eq!(first_key("$['response'][0]"), Some(("response", "[0]")));
        assert_eq!(first_key("$[\"a b\"]"), Some(("a b", "")));
        for other in [
            "$..result",
            "$.*",
            "$[0]",
            "$[?@.x]",
            "$",
            "$ .result",
            "$['a\\'b']",
            "$.1",
        ] {
            assert_eq!(first_key(other), None, "{other}");
        }
    }
}
