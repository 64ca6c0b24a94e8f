//! [`Compact`]: `jsonschema` validates a [`JsonDoc`] where it lies, building no `Value` of it
//! (only of a failing part, for the error it reports).

use std::borrow::Cow;

use jsonschema::json::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde_json::{Number, Value};

use super::node::{Members, Siblings};
use super::{ArrayRef, JsonDoc, JsonRef, ObjectRef};

/// The compact representation, for `jsonschema::options_for::<Compact>()`.
pub struct Compact;

impl Json for Compact {
    type Node<'a> = JsonRef<'a>;
    type PreparedKey = String;
    // Lookups scan the members: a members pass is no dearer than a few of them.
    const KEYS_PER_LOOKUP: usize = 4;
    type StringBuffer = JsonDoc;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        buffer: &mut JsonDoc,
        string: &str,
        f: impl FnOnce(JsonRef<'_>) -> T,
    ) -> T {
        *buffer = JsonDoc::from_value(&Value::String(string.to_owned()));
        f(buffer.root())
    }
}

/// A number of a document.
#[derive(Debug, Clone)]
pub struct CompactNumber(Number);

impl JsonNumber for CompactNumber {
    fn as_u64(&self) -> Option<u64> {
        self.0.as_u64()
    }
    fn as_i64(&self) -> Option<i64> {
        self.0.as_i64()
    }
    fn as_f64(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn as_str(&self) -> Cow<'_, str> {
        Cow::Owned(self.0.to_string())
    }
    fn to_number(&self) -> Cow<'_, Number> {
        Cow::Borrowed(&self.0)
    }
    fn is_written_as_integer(&self) -> bool {
        !self.0.is_f64()
    }
}

impl<'a> Node<'a, Compact> for JsonRef<'a> {
    type Object = ObjectRef<'a>;
    type Array = ArrayRef<'a>;
    type Number = CompactNumber;

    fn as_object(&self) -> Option<ObjectRef<'a>> {
        JsonRef::as_object(*self)
    }

    fn as_array(&self) -> Option<ArrayRef<'a>> {
        JsonRef::as_array(*self)
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        JsonRef::as_str(*self).map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<CompactNumber> {
        JsonRef::as_number(*self).map(CompactNumber)
    }

    fn as_boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn is_null(&self) -> bool {
        JsonRef::is_null(*self)
    }

    fn json_type(&self) -> JsonType {
        if JsonRef::is_null(*self) {
            JsonType::Null
        } else if self.is_boolean() {
            JsonType::Boolean
        } else if JsonRef::is_number(*self) {
            JsonType::Number
        } else if JsonRef::is_string(*self) {
            JsonType::String
        } else if self.is_array() {
            JsonType::Array
        } else {
            JsonType::Object
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        self.eq_value(expected)
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(JsonRef::to_value(*self))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(
            std::ptr::from_ref(self.doc()) as usize,
            u32::try_from(self.index()).unwrap_or(u32::MAX),
        ))
    }
}

impl<'a> Object<'a, Compact> for ObjectRef<'a> {
    type Node = JsonRef<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.distinct_len()
    }

    fn get(&self, key: &String) -> Option<JsonRef<'a>> {
        ObjectRef::get(*self, key)
    }

    fn members(&self) -> Members<'a> {
        self.iter()
    }
}

impl<'a> Array<'a, Compact> for ArrayRef<'a> {
    type Node = JsonRef<'a>;
    type ElementsIter = Siblings<'a>;

    fn len(&self) -> usize {
        ArrayRef::len(*self)
    }

    fn elements(&self) -> Siblings<'a> {
        self.iter()
    }
}
