//! The level a sentence gives by its normative keyword (RFC 2119 / RFC 8174 words, whatever
//! their markup; whatever their case in a document that uses no capitals for them, the seeds;
//! in capitals only where the document says so, MCP: "when, and only when, they appear in all
//! capitals").

use std::sync::LazyLock;

use regex::Regex;

use crate::vocab::Level;

static KEYWORD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(must(?:\s+not)?|shall(?:\s+not)?|required|should(?:\s+not)?|recommended|may|optional)\b").ok()
});

/// What the keywords of a sentence say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keyword {
    /// No normative keyword.
    None,
    /// Keywords of one level (the words found).
    Level(Level, Vec<String>),
    /// Keywords of different levels: the sentence is ambiguous as a rule.
    Ambiguous(Vec<String>),
}

/// The level of one keyword.
fn level_of(word: &str) -> Level {
    let w = word.to_ascii_lowercase();
    if w.starts_with("must") || w.starts_with("shall") || w == "required" {
        Level::Must
    } else if w.starts_with("should") || w == "recommended" {
        Level::Should
    } else {
        Level::May
    }
}

/// The keywords of `sentence`, in any case, and the level they give.
pub fn keyword_level(sentence: &str) -> Keyword {
    keywords(sentence, false)
}

/// The keywords of `sentence` written in capitals (`SHOULD`, not `should`), and the level they
/// give: how a document that adopts BCP 14 "when, and only when, they appear in all capitals"
/// (the MCP specification and its schema) is read.
pub fn keyword_level_in_capitals(sentence: &str) -> Keyword {
    keywords(sentence, true)
}

fn keywords(sentence: &str, capitals_only: bool) -> Keyword {
    let Some(re) = KEYWORD.as_ref() else {
        return Keyword::None;
    };
    let words: Vec<String> = re
        .find_iter(sentence)
        .map(|m| m.as_str().split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|w| !capitals_only || !w.chars().any(|c| c.is_lowercase()))
        .collect();
    let Some(first) = words.first() else {
        return Keyword::None;
    };
    let level = level_of(first);
    if words.iter().all(|w| level_of(w) == level) {
        Keyword::Level(level, words)
    } else {
        Keyword::Ambiguous(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bcp14_document_counts_capitals_only() {
        let schema = "However, any errors in _finding_ the tool … should be reported as an MCP error response.";
        assert!(matches!(
            keyword_level(schema),
            Keyword::Level(Level::Should, _)
        ));
        assert_eq!(keyword_level_in_capitals(schema), Keyword::None);
        assert!(matches!(
            keyword_level_in_capitals("Any errors that originate from the tool SHOULD be reported"),
            Keyword::Level(Level::Should, _)
        ));
        assert!(matches!(
            keyword_level_in_capitals("Servers **MAY** attach an `id`; clients may ignore it"),
            Keyword::Level(Level::May, _)
        ));
    }

    #[test]
    fn keywords_give_levels_whatever_their_markup() {
        assert!(matches!(
            keyword_level("Content-Type **must** be `application/json`."),
            Keyword::Level(Level::Must, _)
        ));
        assert!(matches!(
            keyword_level("The tool **must not** invoke the LLM."),
            Keyword::Level(Level::Must, _)
        ));
        assert!(matches!(
            keyword_level("It SHOULD be unique"),
            Keyword::Level(Level::Should, _)
        ));
        assert!(matches!(
            keyword_level("Servers **MAY** attach an `id`"),
            Keyword::Level(Level::May, _)
        ));
        assert!(matches!(
            keyword_level("Scraping it is the recommended default"),
            Keyword::Level(Level::Should, _)
        ));
        assert_eq!(keyword_level("The registry returns JSON."), Keyword::None);
        assert_eq!(keyword_level("mustard and mayonnaise"), Keyword::None);
    }

    #[test]
    fn a_sentence_with_keywords_of_two_levels_is_ambiguous() {
        assert!(matches!(
            keyword_level(
                "The tool **must not** invoke the LLM. It should complete in under 1 second"
            ),
            Keyword::Ambiguous(_)
        ));
    }
}
