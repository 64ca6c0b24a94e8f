//! Received JSON held compactly: the text as it arrived and one 16-byte node per value.
//!
//! A `serde_json::Value` costs about 590 bytes for a 26-byte `{"type":"text","text":"x"}` (a map
//! with room for four entries and four heap strings), so a 26 MB answer of small blocks took
//! 0.6 GB. A [`JsonDoc`] keeps the text and a flat array of nodes in document order: strings
//! without escapes point into the text, numbers are stored in their node, and a container knows
//! where its subtree ends. The same answer takes its own size plus 16 bytes per value.
//!
//! [`JsonRef`] reads a document in place with the accessors of `serde_json::Value` (`get`,
//! `as_str`, `as_array`, `pointer`…), serializes without building anything, and builds a
//! `Value` only of the part asked for ([`JsonRef::to_value`]). [`Compact`] lets `jsonschema`
//! validate a document where it lies.
//!
//! Parsing goes through `serde_json`'s own parser, so what is accepted, its numbers (`u64` for
//! non-negative integers, `i64` for negative ones, `f64` otherwise), its nesting limit and its
//! error messages are those of `serde_json::from_str`.

mod build;
mod node;
mod schema;

pub use node::{ArrayRef, JsonRef, ObjectRef};
pub use schema::Compact;

use serde_json::Value;

/// What one node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    False,
    True,
    /// A non-negative integer; the payload is the value.
    U64,
    /// A negative integer; the payload is the value's bits.
    I64,
    /// Any other number; the payload is the value's bits.
    F64,
    /// A string in the text: payload offset, `len` bytes.
    Text,
    /// A string that had escapes, unescaped in the side buffer: payload offset, `len` bytes.
    Side,
    /// `len` elements follow; the payload is the index after the subtree.
    Array,
    /// `len` members follow, each a key node and its value; the payload is the index after the
    /// subtree.
    Object,
}

/// One value: 16 bytes.
#[derive(Debug, Clone, Copy)]
struct Node {
    kind: Kind,
    len: u32,
    payload: u64,
}

/// One JSON document held compactly.
#[derive(Clone, Default)]
pub struct JsonDoc {
    text: String,
    side: String,
    nodes: Vec<Node>,
}

/// An empty document: its root reads as `null`.
static NULL: JsonDoc = JsonDoc {
    text: String::new(),
    side: String::new(),
    nodes: Vec::new(),
};

impl JsonRef<'_> {
    /// `null`.
    pub fn null() -> Self {
        NULL.root()
    }
}

impl JsonDoc {
    /// Parses `text`, keeping it. Errors are `serde_json`'s own, with its line and column.
    pub fn parse(text: String) -> Result<Self, serde_json::Error> {
        build::parse(text).map_err(|(e, _)| e)
    }

    /// [`JsonDoc::parse`], giving the text back with the error.
    pub fn try_parse(text: String) -> Result<Self, (serde_json::Error, String)> {
        build::parse(text)
    }

    /// A document holding `value` (its serialization, parsed).
    pub fn from_value(value: &Value) -> Self {
        // Serializing a `Value` cannot fail, nor can parsing what it wrote.
        Self::parse(value.to_string()).unwrap_or_default()
    }

    /// A shared document holding `value`.
    pub fn shared(value: &Value) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self::from_value(value))
    }

    /// The document's value.
    pub fn root(&self) -> JsonRef<'_> {
        JsonRef::new(self, 0)
    }

    /// `root().get(key)`.
    pub fn get(&self, key: &str) -> Option<JsonRef<'_>> {
        self.root().get(key)
    }

    /// `root().to_value()`.
    pub fn to_value(&self) -> Value {
        self.root().to_value()
    }

    /// Whether `needle` occurs in any string or name of the document (or across the text
    /// between them: a cheap test that never misses one).
    pub fn mentions(&self, needle: &str) -> bool {
        self.text.contains(needle) || self.side.contains(needle)
    }

    /// Bytes held: the text, unescaped strings and nodes.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.side.capacity() + self.nodes.capacity() * size_of::<Node>()
    }
}

impl From<Value> for JsonDoc {
    fn from(value: Value) -> Self {
        Self::from_value(&value)
    }
}

impl From<&Value> for JsonDoc {
    fn from(value: &Value) -> Self {
        Self::from_value(value)
    }
}

impl PartialEq for JsonDoc {
    fn eq(&self, other: &Self) -> bool {
        self.root() == other.root()
    }
}

impl PartialEq<Value> for JsonDoc {
    fn eq(&self, other: &Value) -> bool {
        self.root() == *other
    }
}

impl std::fmt::Debug for JsonDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.root(), f)
    }
}

impl std::fmt::Display for JsonDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.root(), f)
    }
}

impl serde::Serialize for JsonDoc {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.root().serialize(s)
    }
}

#[cfg(test)]
mod tests;
