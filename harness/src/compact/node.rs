//! Reading a [`JsonDoc`] in place: [`JsonRef`] and its array and object views.

use std::fmt;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Number, Value};

use super::{JsonDoc, Kind, Node};

/// One value of a document, read in place. Cheap to copy.
#[derive(Clone, Copy)]
pub struct JsonRef<'a> {
    doc: &'a JsonDoc,
    at: usize,
}

impl<'a> JsonRef<'a> {
    pub(super) fn new(doc: &'a JsonDoc, at: usize) -> Self {
        Self { doc, at }
    }

    fn node(self) -> Node {
        self.doc.nodes.get(self.at).copied().unwrap_or(Node {
            kind: Kind::Null,
            len: 0,
            payload: 0,
        })
    }

    /// The index after this value's subtree.
    fn next(self) -> usize {
        let n = self.node();
        match n.kind {
            Kind::Array | Kind::Object => n.payload as usize,
            _ => self.at + 1,
        }
    }

    /// Where this value sits in its document (for identities).
    pub(super) fn index(self) -> usize {
        self.at
    }

    pub(super) fn doc(self) -> &'a JsonDoc {
        self.doc
    }

    pub fn is_null(self) -> bool {
        self.node().kind == Kind::Null
    }

    pub fn is_boolean(self) -> bool {
        matches!(self.node().kind, Kind::True | Kind::False)
    }

    pub fn is_number(self) -> bool {
        matches!(self.node().kind, Kind::U64 | Kind::I64 | Kind::F64)
    }

    pub fn is_u64(self) -> bool {
        self.node().kind == Kind::U64
    }

    pub fn is_i64(self) -> bool {
        self.as_i64().is_some()
    }

    pub fn is_f64(self) -> bool {
        self.node().kind == Kind::F64
    }

    pub fn is_string(self) -> bool {
        matches!(self.node().kind, Kind::Text | Kind::Side)
    }

    pub fn is_array(self) -> bool {
        self.node().kind == Kind::Array
    }

    pub fn is_object(self) -> bool {
        self.node().kind == Kind::Object
    }

    pub fn as_bool(self) -> Option<bool> {
        match self.node().kind {
            Kind::True => Some(true),
            Kind::False => Some(false),
            _ => None,
        }
    }

    pub fn as_u64(self) -> Option<u64> {
        let n = self.node();
        match n.kind {
            Kind::U64 => Some(n.payload),
            _ => None,
        }
    }

    pub fn as_i64(self) -> Option<i64> {
        let n = self.node();
        match n.kind {
            Kind::U64 => i64::try_from(n.payload).ok(),
            Kind::I64 => Some(n.payload as i64),
            _ => None,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        let n = self.node();
        match n.kind {
            Kind::U64 => Some(n.payload as f64),
            Kind::I64 => Some(n.payload as i64 as f64),
            Kind::F64 => Some(f64::from_bits(n.payload)),
            _ => None,
        }
    }

    /// The number as `serde_json` holds it.
    pub fn as_number(self) -> Option<Number> {
        let n = self.node();
        match n.kind {
            Kind::U64 => Some(Number::from(n.payload)),
            Kind::I64 => Some(Number::from(n.payload as i64)),
            Kind::F64 => Number::from_f64(f64::from_bits(n.payload)),
            _ => None,
        }
    }

    pub fn as_str(self) -> Option<&'a str> {
        let n = self.node();
        let (from, at) = match n.kind {
            Kind::Text => (&self.doc.text, n.payload as usize),
            Kind::Side => (&self.doc.side, n.payload as usize),
            _ => return None,
        };
        from.get(at..at + n.len as usize)
    }

    pub fn as_array(self) -> Option<ArrayRef<'a>> {
        self.is_array().then_some(ArrayRef(self))
    }

    pub fn as_object(self) -> Option<ObjectRef<'a>> {
        self.is_object().then_some(ObjectRef(self))
    }

    /// An object's member (the last of that name, as `serde_json` keeps).
    pub fn get(self, key: &str) -> Option<JsonRef<'a>> {
        self.as_object()?.get(key)
    }

    /// An array's element.
    pub fn at(self, index: usize) -> Option<JsonRef<'a>> {
        self.as_array()?.get(index)
    }

    /// The value at a JSON pointer (RFC 6901), as `Value::pointer`.
    pub fn pointer(self, pointer: &str) -> Option<JsonRef<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .try_fold(self, |v, token| {
                if v.is_object() {
                    v.get(&token)
                } else {
                    let i = token.parse::<usize>().ok()?;
                    (token == "0" || !token.starts_with('0') && !token.starts_with('+'))
                        .then_some(())?;
                    v.at(i)
                }
            })
    }

    /// A `serde_json::Value` of this value: costs what the part costs, not the document.
    pub fn to_value(self) -> Value {
        let n = self.node();
        match n.kind {
            Kind::Null => Value::Null,
            Kind::False => Value::Bool(false),
            Kind::True => Value::Bool(true),
            Kind::U64 | Kind::I64 | Kind::F64 => {
                self.as_number().map_or(Value::Null, Value::Number)
            }
            Kind::Text | Kind::Side => Value::String(self.as_str().unwrap_or_default().to_owned()),
            Kind::Array => Value::Array(ArrayRef(self).iter().map(Self::to_value).collect()),
            Kind::Object => {
                let mut m = Map::new();
                for (k, v) in ObjectRef(self).iter() {
                    // A repeated name keeps its first place and its last value, as `Value`.
                    m.insert(k.to_owned(), v.to_value());
                }
                Value::Object(m)
            }
        }
    }

    /// Equality with a `Value` under `serde_json`'s rules (objects regardless of member order).
    pub fn eq_value(self, other: &Value) -> bool {
        match other {
            Value::Null => self.is_null(),
            Value::Bool(b) => self.as_bool() == Some(*b),
            Value::Number(n) => self.as_number().as_ref() == Some(n),
            Value::String(s) => self.as_str() == Some(s.as_str()),
            Value::Array(items) => self.as_array().is_some_and(|a| {
                a.len() == items.len() && a.iter().zip(items).all(|(x, y)| x.eq_value(y))
            }),
            Value::Object(members) => self.as_object().is_some_and(|o| {
                o.distinct_len() == members.len()
                    && members
                        .iter()
                        .all(|(k, v)| o.get(k).is_some_and(|x| x.eq_value(v)))
            }),
        }
    }

    fn eq_ref(self, other: JsonRef<'_>) -> bool {
        let (a, b) = (self.node(), other.node());
        match (a.kind, b.kind) {
            (Kind::Array, Kind::Array) => {
                a.len == b.len
                    && ArrayRef(self)
                        .iter()
                        .zip(ArrayRef(other).iter())
                        .all(|(x, y)| x.eq_ref(y))
            }
            (Kind::Object, Kind::Object) => {
                let (x, y) = (ObjectRef(self), ObjectRef(other));
                let x = x.distinct();
                x.len() == y.distinct_len()
                    && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| v.eq_ref(w)))
            }
            _ if self.is_string() => self.as_str().is_some() && self.as_str() == other.as_str(),
            _ if self.is_number() => self
                .as_number()
                .is_some_and(|n| other.as_number() == Some(n)),
            (x, y) => x == y,
        }
    }
}

impl PartialEq for JsonRef<'_> {
    /// Structural equality, as between two `Value`s.
    fn eq(&self, other: &Self) -> bool {
        // The same node of the same document (a member compared with its own lookup).
        (std::ptr::eq(self.doc, other.doc) && self.at == other.at) || self.eq_ref(*other)
    }
}

impl PartialEq<Value> for JsonRef<'_> {
    fn eq(&self, other: &Value) -> bool {
        self.eq_value(other)
    }
}

impl PartialEq<&Value> for JsonRef<'_> {
    fn eq(&self, other: &&Value) -> bool {
        self.eq_value(other)
    }
}

impl PartialEq<str> for JsonRef<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for JsonRef<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl Serialize for JsonRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.node();
        match n.kind {
            Kind::Null => s.serialize_unit(),
            Kind::False => s.serialize_bool(false),
            Kind::True => s.serialize_bool(true),
            Kind::U64 => s.serialize_u64(n.payload),
            Kind::I64 => s.serialize_i64(n.payload as i64),
            Kind::F64 => s.serialize_f64(f64::from_bits(n.payload)),
            Kind::Text | Kind::Side => s.serialize_str(self.as_str().unwrap_or_default()),
            Kind::Array => {
                let mut seq = s.serialize_seq(Some(n.len as usize))?;
                for e in ArrayRef(*self).iter() {
                    seq.serialize_element(&e)?;
                }
                seq.end()
            }
            Kind::Object => {
                let o = ObjectRef(*self);
                let mut map = s.serialize_map(None)?;
                if o.has_repeats() {
                    // A repeated name is written once, with the value `get` reads.
                    for (k, v) in o.distinct() {
                        map.serialize_entry(k, &v)?;
                    }
                } else {
                    for (k, v) in o.iter() {
                        map.serialize_entry(k, &v)?;
                    }
                }
                map.end()
            }
        }
    }
}

impl fmt::Display for JsonRef<'_> {
    /// Compact JSON, as `Value`'s `Display`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl fmt::Debug for JsonRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// An array, read in place.
#[derive(Clone, Copy)]
pub struct ArrayRef<'a>(JsonRef<'a>);

impl<'a> ArrayRef<'a> {
    pub fn len(self) -> usize {
        self.0.node().len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The elements in order.
    pub fn iter(self) -> Siblings<'a> {
        Siblings {
            doc: self.0.doc,
            at: self.0.at + 1,
            left: self.len(),
        }
    }

    pub fn get(self, index: usize) -> Option<JsonRef<'a>> {
        self.iter().nth(index)
    }

    pub fn first(self) -> Option<JsonRef<'a>> {
        self.iter().next()
    }

    pub fn last(self) -> Option<JsonRef<'a>> {
        self.iter().last()
    }

    /// The array as a value.
    pub fn as_ref(self) -> JsonRef<'a> {
        self.0
    }
}

impl<'a> IntoIterator for ArrayRef<'a> {
    type Item = JsonRef<'a>;
    type IntoIter = Siblings<'a>;
    fn into_iter(self) -> Siblings<'a> {
        self.iter()
    }
}

/// Consecutive values of a document: an array's elements.
#[derive(Clone)]
pub struct Siblings<'a> {
    doc: &'a JsonDoc,
    at: usize,
    left: usize,
}

impl<'a> Iterator for Siblings<'a> {
    type Item = JsonRef<'a>;

    fn next(&mut self) -> Option<JsonRef<'a>> {
        if self.left == 0 || self.at >= self.doc.nodes.len() {
            return None;
        }
        self.left -= 1;
        let v = JsonRef::new(self.doc, self.at);
        self.at = v.next();
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// An object, read in place. Members keep their order and any repeated name.
#[derive(Clone, Copy)]
pub struct ObjectRef<'a>(JsonRef<'a>);

impl<'a> ObjectRef<'a> {
    /// Members as written (a repeated name counts each time).
    pub fn len(self) -> usize {
        self.0.node().len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Distinct names, as a `Value` of this object would have.
    pub fn distinct_len(self) -> usize {
        if self.has_repeats() {
            self.distinct().len()
        } else {
            self.len()
        }
    }

    /// Whether a name occurs twice.
    pub fn has_repeats(self) -> bool {
        if self.len() <= 16 {
            let keys: Vec<&str> = self.keys().collect();
            return keys
                .iter()
                .enumerate()
                .any(|(i, k)| keys[i + 1..].contains(k));
        }
        let mut seen = std::collections::HashSet::with_capacity(self.len());
        !self.keys().all(|k| seen.insert(k))
    }

    /// Members with each name once, where it first occurs, with its last value: the members
    /// of a `Value` of this object.
    pub fn distinct(self) -> Vec<(&'a str, JsonRef<'a>)> {
        let mut out: Vec<(&'a str, JsonRef<'a>)> = Vec::with_capacity(self.len());
        let mut place: std::collections::HashMap<&'a str, usize> =
            std::collections::HashMap::with_capacity(self.len());
        for (k, v) in self.iter() {
            match place.entry(k) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    if let Some(slot) = out.get_mut(*e.get()) {
                        slot.1 = v;
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(out.len());
                    out.push((k, v));
                }
            }
        }
        out
    }

    /// Members in order: name and value.
    pub fn iter(self) -> Members<'a> {
        Members {
            doc: self.0.doc,
            at: self.0.at + 1,
            left: self.len(),
        }
    }

    /// The value of the member named `key` (the last, when the name repeats).
    pub fn get(self, key: &str) -> Option<JsonRef<'a>> {
        self.iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .last()
    }

    pub fn contains_key(self, key: &str) -> bool {
        self.iter().any(|(k, _)| k == key)
    }

    pub fn keys(self) -> impl Iterator<Item = &'a str> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(self) -> impl Iterator<Item = JsonRef<'a>> {
        self.iter().map(|(_, v)| v)
    }

    /// The object as a value.
    pub fn as_ref(self) -> JsonRef<'a> {
        self.0
    }
}

impl<'a> IntoIterator for ObjectRef<'a> {
    type Item = (&'a str, JsonRef<'a>);
    type IntoIter = Members<'a>;
    fn into_iter(self) -> Members<'a> {
        self.iter()
    }
}

/// An object's members in order.
#[derive(Clone)]
pub struct Members<'a> {
    doc: &'a JsonDoc,
    at: usize,
    left: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, JsonRef<'a>);

    fn next(&mut self) -> Option<(&'a str, JsonRef<'a>)> {
        if self.left == 0 || self.at + 1 >= self.doc.nodes.len() {
            return None;
        }
        self.left -= 1;
        let key = JsonRef::new(self.doc, self.at).as_str().unwrap_or_default();
        let value = JsonRef::new(self.doc, self.at + 1);
        self.at = value.next();
        Some((key, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}
