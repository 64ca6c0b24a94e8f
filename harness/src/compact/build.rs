//! Building a [`JsonDoc`] with `serde_json`'s parser: a visitor appends one node per value.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{JsonDoc, Kind, Node};

/// Parses `text` into a document that keeps it.
pub(super) fn parse(text: String) -> Result<JsonDoc, (serde_json::Error, String)> {
    let mut b = Builder {
        base: text.as_ptr() as usize,
        end: text.as_ptr() as usize + text.len(),
        // About one value per eight bytes of text: fewer regrowths of a large answer.
        nodes: Vec::with_capacity((text.len() / 8).clamp(1, 1 << 20)),
        side: String::new(),
    };
    let parsed = {
        let mut de = serde_json::Deserializer::from_str(&text);
        Seed(&mut b).deserialize(&mut de).and_then(|()| de.end())
    };
    if let Err(e) = parsed {
        return Err((e, text));
    }
    let Builder {
        mut nodes,
        mut side,
        ..
    } = b;
    nodes.shrink_to_fit();
    side.shrink_to_fit();
    Ok(JsonDoc { text, side, nodes })
}

struct Builder {
    /// Where the text starts and ends in memory: a borrowed string inside it is kept as a span.
    base: usize,
    end: usize,
    nodes: Vec<Node>,
    side: String,
}

impl Builder {
    fn push(&mut self, kind: Kind, len: u32, payload: u64) -> usize {
        self.nodes.push(Node { kind, len, payload });
        self.nodes.len() - 1
    }

    fn string<E: serde::de::Error>(&mut self, s: &str, borrowed: bool) -> Result<(), E> {
        let len = u32::try_from(s.len()).map_err(|_| E::custom("a string over 4 GiB"))?;
        let at = s.as_ptr() as usize;
        if borrowed && at >= self.base && at + s.len() <= self.end {
            self.push(Kind::Text, len, (at - self.base) as u64);
        } else {
            let offset = self.side.len() as u64;
            self.side.push_str(s);
            self.push(Kind::Side, len, offset);
        }
        Ok(())
    }

    fn close<E: serde::de::Error>(&mut self, at: usize, count: usize) -> Result<(), E> {
        let count = u32::try_from(count).map_err(|_| E::custom("over 4 G items"))?;
        let end = self.nodes.len() as u64;
        if let Some(n) = self.nodes.get_mut(at) {
            n.len = count;
            n.payload = end;
        }
        Ok(())
    }
}

/// Appends the next value's nodes.
struct Seed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push(Kind::Null, 0, 0);
        Ok(())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.0.push(if v { Kind::True } else { Kind::False }, 0, 0);
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.0.push(Kind::U64, 0, v);
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        // `serde_json` gives non-negative integers as `u64`; keep that form if one comes here.
        match u64::try_from(v) {
            Ok(u) => self.0.push(Kind::U64, 0, u),
            Err(_) => self.0.push(Kind::I64, 0, v as u64),
        };
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.0.push(Kind::F64, 0, v.to_bits());
        Ok(())
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<(), E> {
        self.0.string(v, true)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.0.string(v, false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let at = self.0.push(Kind::Array, 0, 0);
        let mut count = 0usize;
        while seq.next_element_seed(Seed(&mut *self.0))?.is_some() {
            count += 1;
        }
        self.0.close(at, count)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let at = self.0.push(Kind::Object, 0, 0);
        let mut count = 0usize;
        while map.next_key_seed(Seed(&mut *self.0))?.is_some() {
            map.next_value_seed(Seed(&mut *self.0))?;
            count += 1;
        }
        self.0.close(at, count)
    }
}
