//! The record description format: one `metadata_struct!` per record (and per nested struct),
//! listing its fields in wire order; decode, encode, `Default` and the JSON view all come from
//! that one list. docs/metadata-records.md explains it and how to add a version.
//!
//! ```text
//! metadata_struct! {
//!     /// doc
//!     pub struct PartitionRecord {
//!         /// doc
//!         partition_id: i32 [0+, default -1],          // plain field, from version 0
//!         directories: Vec<Uuid> [1+],                 // plain field, from version 1
//!         eligible_leader_replicas: Option<Vec<i32>> [2+, tag 1],  // tagged field 1, from v2
//!     }
//! }
//! ```
//!
//! Rules the generated code follows (those of Kafka's flexible message encoding):
//! - plain fields are read and written in the listed order when the version carries them;
//!   otherwise they keep their default;
//! - tagged fields are written only when they differ from their default, in ascending tag
//!   order, followed by the tagged fields the description does not know (kept as read in
//!   `unknown_tagged`, so a record from a newer writer re-encodes byte for byte);
//! - a tag read at a version that does not define it is an unknown tagged field;
//! - a known tagged field's value must fill its size exactly;
//! - a field with a non-default value cannot be written at a version without it
//!   (`field_missing_at`; checked for the record's own fields, whose nested structs have had
//!   all their fields since version 0).

/// The default of a field: the one given with `default`, else `Default::default()`.
macro_rules! field_default {
    () => {
        Default::default()
    };
    ($default:expr) => {
        $default
    };
}

/// The tag of a field, if it is tagged.
macro_rules! field_tag {
    () => {
        None::<u32>
    };
    ($tag:literal) => {
        Some::<u32>($tag)
    };
}

pub(crate) use {field_default, field_tag};

/// Whether a record at `version` carries a field that exists from `since` on. (A function, not
/// an inline `>=`, so `since = 0` does not read as a comparison that is always true.)
pub(crate) fn carries(version: u16, since: u16) -> bool {
    version >= since
}

/// Whether `value` equals `default` (tagged fields equal to their default are not written).
pub(crate) fn is_default<T: PartialEq>(value: &T, default: T) -> bool {
    *value == default
}

/// Declares a metadata struct (a record body or a nested struct) from its field list; see the
/// module documentation for the syntax.
macro_rules! metadata_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty [$since:literal + $(, tag $tag:literal)? $(, default $default:expr)?]
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
            /// Tagged fields this description does not know, as read (re-encoded after the
            /// known ones).
            pub unknown_tagged: $crate::metadata::wire::TaggedFields,
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $($field: $crate::metadata::describe::field_default!($($default)?),)*
                    unknown_tagged: Default::default(),
                }
            }
        }

        impl $name {
            /// The first field holding a non-default value that `version` does not carry
            /// (Kafka refuses to write such a record rather than drop the value).
            #[allow(unused_variables)] // a struct without fields has no use for the version
            pub fn field_missing_at(&self, version: u16) -> Option<&'static str> {
                $(
                    if !$crate::metadata::describe::carries(version, $since)
                        && !$crate::metadata::describe::is_default(
                            &self.$field,
                            $crate::metadata::describe::field_default!($($default)?),
                        )
                    {
                        return Some(stringify!($field));
                    }
                )*
                None
            }
        }

        impl $crate::metadata::field::Element for $name {}

        impl $crate::metadata::field::Field for $name {
            #[allow(unused_variables)] // a struct without fields has no use for the version
            fn read(
                r: &mut $crate::metadata::wire::Reader<'_>,
                version: u16,
                _: &'static str,
            ) -> Result<Self, $crate::metadata::MetadataError> {
                let mut this = Self::default();
                $(
                    if $crate::metadata::describe::field_tag!($($tag)?).is_none() && $crate::metadata::describe::carries(version, $since) {
                        this.$field = <$ty as $crate::metadata::field::Field>::read(
                            r,
                            version,
                            concat!(stringify!($name), ".", stringify!($field)),
                        )?;
                    }
                )*
                let count = r.uvarint()? as usize;
                // Each tagged field takes at least two bytes: refuse an impossible count
                // before looping over it.
                if count > r.remaining() {
                    return Err($crate::metadata::MetadataError::Malformed(format!(
                        "{}: {count} tagged fields in {} bytes",
                        stringify!($name),
                        r.remaining()
                    )));
                }
                for _ in 0..count {
                    let tag = r.uvarint()?;
                    let size = r.uvarint()? as usize;
                    let value = r.bytes(size, concat!(stringify!($name), " tagged field"))?;
                    #[allow(unused_mut)] // a struct without fields never sets it
                    let mut known = false;
                    $(
                        if !known
                            && $crate::metadata::describe::field_tag!($($tag)?) == Some(tag)
                            && $crate::metadata::describe::carries(version, $since)
                        {
                            let what = concat!(stringify!($name), ".", stringify!($field));
                            let mut sub = $crate::metadata::wire::Reader::new(value);
                            this.$field = <$ty as $crate::metadata::field::Field>::read(&mut sub, version, what)?;
                            sub.finish(what)?;
                            known = true;
                        }
                    )*
                    if !known {
                        this.unknown_tagged
                            .0
                            .push((tag, bytes::Bytes::copy_from_slice(value)));
                    }
                }
                Ok(this)
            }

            #[allow(unused_variables)] // a struct without fields has no use for the version
            fn write(&self, out: &mut Vec<u8>, version: u16) {
                $(
                    if $crate::metadata::describe::field_tag!($($tag)?).is_none() && $crate::metadata::describe::carries(version, $since) {
                        $crate::metadata::field::Field::write(&self.$field, out, version);
                    }
                )*
                let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
                $(
                    if let Some(tag) = $crate::metadata::describe::field_tag!($($tag)?) {
                        if $crate::metadata::describe::carries(version, $since)
                            && !$crate::metadata::describe::is_default(
                                &self.$field,
                                $crate::metadata::describe::field_default!($($default)?),
                            )
                        {
                            let mut value = Vec::new();
                            $crate::metadata::field::Field::write(&self.$field, &mut value, version);
                            tagged.push((tag, value));
                        }
                    }
                )*
                tagged.sort_by_key(|(tag, _)| *tag);
                $crate::records::varint::put_uvarint(
                    out,
                    (tagged.len() + self.unknown_tagged.0.len()) as u32,
                );
                for (tag, value) in &tagged {
                    $crate::records::varint::put_uvarint(out, *tag);
                    $crate::records::varint::put_uvarint(out, value.len() as u32);
                    out.extend_from_slice(value);
                }
                for (tag, value) in &self.unknown_tagged.0 {
                    $crate::records::varint::put_uvarint(out, *tag);
                    $crate::records::varint::put_uvarint(out, value.len() as u32);
                    out.extend_from_slice(value);
                }
            }

            #[allow(unused_variables)] // a struct without fields has no use for the version
            fn to_json(&self, version: u16) -> serde_json::Value {
                let mut map = serde_json::Map::new();
                $(
                    if $crate::metadata::describe::carries(version, $since) {
                        map.insert(stringify!($field).to_string(), $crate::metadata::field::Field::to_json(&self.$field, version));
                    }
                )*
                if !self.unknown_tagged.0.is_empty() {
                    map.insert(
                        "unknown_tagged".to_string(),
                        serde_json::Value::Array(
                            self.unknown_tagged
                                .0
                                .iter()
                                .map(|(tag, value)| {
                                    serde_json::json!({"tag": tag, "size": value.len()})
                                })
                                .collect(),
                        ),
                    );
                }
                serde_json::Value::Object(map)
            }

            #[allow(unused_variables, unused_mut, unused_assignments)] // the last field sets `first` for none
            fn to_kafka_string(&self, version: u16, out: &mut String) {
                out.push_str(concat!(stringify!($name), "("));
                let mut first = true;
                $(
                    if $crate::metadata::describe::carries(version, $since) {
                        if !first {
                            out.push_str(", ");
                        }
                        first = false;
                        out.push_str(&$crate::metadata::describe::camel_case(stringify!($field)));
                        out.push('=');
                        $crate::metadata::field::Field::to_kafka_string(&self.$field, version, out);
                    }
                )*
                out.push(')');
            }
        }
    };
}

/// `broker_epoch` → `brokerEpoch`: Kafka's field names in its generated `toString`.
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) use metadata_struct;
