//! The attribute-table machinery: one row per attribute, everything else derived.
//!
//! [`attribute_table!`] takes rows like
//! `max_depth: i32 = "MAXDEPTH", Int(0, 999_999_999), default 5000, applies LOCAL | MODEL, inq 15, "Maximum messages on the queue";`
//! and generates the typed struct (with `Default` from the rows) plus a static table of
//! [`AttrDef`]s whose `get`/`set` function pointers read and write the typed fields
//! through the neutral [`AttrValue`]. MQSC parsing, DISPLAY, MQINQ and docs walk the table.

use std::fmt;

/// The kind of value an attribute holds, with its limits: what MQSC accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// A whole number in `min..=max`.
    Int {
        /// Smallest accepted value.
        min: i32,
        /// Largest accepted value.
        max: i32,
    },
    /// A whole number in `min..=max`, or one keyword held as [`WORD_VALUE`] (-1): MAXFSIZE
    /// (DEFAULT), MARKINT (NOLIMIT).
    IntOrWord {
        /// Smallest accepted number.
        min: i32,
        /// Largest accepted number.
        max: i32,
        /// The keyword accepted instead of a number.
        word: &'static str,
    },
    /// Free text up to `max_len` bytes (e.g. DESCR).
    Text {
        /// Longest accepted text.
        max_len: usize,
    },
    /// Text up to `max_len` bytes that must also follow a rule (SSLCIPH: a CipherSpec
    /// Ferry offers; SSLPEER: a distinguished-name filter).
    Checked {
        /// Longest accepted text.
        max_len: usize,
        /// The rule.
        rule: TextRule,
    },
    /// An MQ object name (blank allowed) up to `max_len` characters.
    Name {
        /// Longest accepted name.
        max_len: usize,
    },
    /// One keyword out of a fixed list, e.g. PUT(ENABLED|DISABLED).
    Keyword {
        /// Accepted keywords, upper case.
        values: &'static [&'static str],
    },
    /// A list of keywords out of a fixed list, in order, each at most once, e.g.
    /// COMPMSG(LZ4FAST,ZLIBFAST). Held as [`AttrValue::Text`], the keywords joined by
    /// commas.
    KeywordList {
        /// Accepted keywords, upper case.
        values: &'static [&'static str],
        /// Most keywords in one list.
        max: usize,
    },
    /// A list of MQ object names, in order, each at most `max_len` characters, at most
    /// `max` of them, e.g. a namelist's NAMES(CLUS1,CLUS2). Held as [`AttrValue::Text`],
    /// the names joined by commas (empty: no names).
    NameList {
        /// Longest accepted name.
        max_len: usize,
        /// Most names in one list.
        max: usize,
    },
    /// A bare keyword pair, e.g. SHARE / NOSHARE.
    Flag {
        /// The keyword that sets it.
        on: &'static str,
        /// The keyword that clears it.
        off: &'static str,
    },
}

/// What text an [`AttrKind::Checked`] attribute accepts beyond its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextRule {
    /// Blank or a CipherSpec name or alias Ferry offers (`ferry_security::cipherspec`).
    CipherSpec,
    /// Blank or an SSLPEER distinguished-name filter (`ferry_security::peer_name`).
    PeerName,
    /// Blank or exactly `bytes` bytes as hex digits (DESTCORL, PUBACCT).
    Hex {
        /// How many bytes the digits give (two digits each).
        bytes: usize,
    },
    /// Blank or a connection name: `host(port)`, a bare host, or a comma-separated list
    /// (`ferry_mqi::conname`).
    ConnectionName,
}

impl TextRule {
    /// `Err(reason)` when `text` breaks the rule.
    pub fn check(self, text: &str) -> Result<(), String> {
        match self {
            TextRule::CipherSpec => ferry_security::CipherSpecChoice::parse(text)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            TextRule::PeerName => ferry_security::PeerNameFilter::parse(text)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            TextRule::Hex { bytes } => {
                let t = text.trim();
                if t.is_empty()
                    || (t.len() == 2 * bytes && t.chars().all(|c| c.is_ascii_hexdigit()))
                {
                    Ok(())
                } else {
                    Err(format!("give {} hexadecimal digits, or blank", 2 * bytes))
                }
            }
            TextRule::ConnectionName => {
                if text.trim().is_empty() {
                    return Ok(());
                }
                ferry_mqi::conname::parse_conname(text).map(|_| ()).map_err(|_| {
                    "give host(port), a bare host (port 1414), or a comma-separated list of those"
                        .to_string()
                })
            }
        }
    }

    /// What the rule accepts, for messages and docs.
    fn describe(self) -> &'static str {
        match self {
            TextRule::CipherSpec => "a CipherSpec name or alias",
            TextRule::PeerName => "a distinguished-name filter",
            TextRule::Hex { .. } => "hexadecimal digits",
            TextRule::ConnectionName => "a connection name such as host(1414)",
        }
    }
}

/// How [`AttrKind::IntOrWord`] holds its keyword.
pub const WORD_VALUE: i32 = -1;

/// A value as MQSC, DISPLAY and MQINQ see it, independent of the Rust field type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValue {
    /// For [`AttrKind::Int`].
    Int(i32),
    /// For [`AttrKind::Text`] and [`AttrKind::Name`].
    Text(String),
    /// For [`AttrKind::Keyword`]: the keyword, upper case.
    Keyword(&'static str),
    /// For [`AttrKind::Flag`].
    Flag(bool),
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Int(n) => write!(f, "{n}"),
            AttrValue::Text(s) => f.write_str(s),
            AttrValue::Keyword(k) => f.write_str(k),
            AttrValue::Flag(b) => write!(f, "{b}"),
        }
    }
}

/// Why an attribute value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AttrError {
    /// The value has the wrong kind for the attribute.
    #[error("{keyword} takes {expected}")]
    WrongKind {
        /// The attribute.
        keyword: &'static str,
        /// What it takes.
        expected: String,
    },
    /// A number outside the attribute's range.
    #[error("{keyword}({value}) is outside the range {min} to {max}")]
    OutOfRange {
        /// The attribute.
        keyword: &'static str,
        /// The value given.
        value: i64,
        /// Smallest accepted.
        min: i32,
        /// Largest accepted.
        max: i32,
    },
    /// Text or a name longer than allowed.
    #[error("{keyword} is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// The attribute.
        keyword: &'static str,
        /// Length given.
        len: usize,
        /// Limit.
        max: usize,
    },
    /// A keyword not in the attribute's list.
    #[error("{keyword}({value}) is not valid; use one of {allowed}")]
    BadKeyword {
        /// The attribute.
        keyword: &'static str,
        /// The value given.
        value: String,
        /// The accepted values, joined.
        allowed: String,
    },
    /// A name with characters MQ names may not hold.
    #[error("{keyword}: {source}")]
    BadName {
        /// The attribute.
        keyword: &'static str,
        /// The rule broken.
        source: ferry_mqi::NameError,
    },
    /// Text that breaks the attribute's rule (an SSLCIPH Ferry does not offer, an SSLPEER
    /// filter that does not parse).
    #[error("{keyword}({value}) is not valid: {reason}")]
    Refused {
        /// The attribute.
        keyword: &'static str,
        /// The value given.
        value: String,
        /// Why.
        reason: String,
    },
    /// The attribute cannot be set (e.g. CRDATE, MAXPRTY).
    #[error("{keyword} cannot be set")]
    ReadOnly {
        /// The attribute.
        keyword: &'static str,
    },
    /// The attribute does not apply to this object type.
    #[error("{keyword} is not valid for {object}")]
    NotApplicable {
        /// The attribute.
        keyword: &'static str,
        /// The object type, e.g. QALIAS.
        object: &'static str,
    },
}

/// Conversion between a Rust field type and the neutral [`AttrValue`].
pub trait AttrType: Sized {
    /// The field as a neutral value.
    fn to_value(&self) -> AttrValue;
    /// The field from a neutral value already checked against the row's [`AttrKind`].
    fn from_value(v: AttrValue) -> Option<Self>;
}

impl AttrType for i32 {
    fn to_value(&self) -> AttrValue {
        AttrValue::Int(*self)
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Int(n) => Some(n),
            _ => None,
        }
    }
}

impl AttrType for String {
    fn to_value(&self) -> AttrValue {
        AttrValue::Text(self.clone())
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl AttrType for Vec<String> {
    fn to_value(&self) -> AttrValue {
        AttrValue::Text(self.join(","))
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Text(s) => Some(
                s.split(',')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
            _ => None,
        }
    }
}

impl AttrType for bool {
    fn to_value(&self) -> AttrValue {
        AttrValue::Flag(*self)
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Flag(b) => Some(b),
            _ => None,
        }
    }
}

/// One row of an attribute table for definitions of type `D`.
pub struct AttrDef<D: 'static> {
    /// The MQSC keyword (upper case), e.g. `MAXDEPTH`; for flags, the "on" keyword.
    pub keyword: &'static str,
    /// Kind and range of the value.
    pub kind: AttrKind,
    /// Bit mask of the object subtypes it applies to (see each table's constants).
    pub applies: u32,
    /// MQINQ selector (MQIA_* / MQCA_*), if the attribute can be inquired.
    pub selector: Option<ferry_mqi::Selector>,
    /// True when only the queue manager sets it (dates, MAXPRTY).
    pub read_only: bool,
    /// One line saying what it is for, shown in docs.
    pub doc: &'static str,
    /// The default as a neutral value (for docs and display).
    pub default: fn() -> AttrValue,
    /// Reads the field.
    pub get: fn(&D) -> AttrValue,
    /// Writes the field (the value must already pass [`AttrDef::check`]).
    pub set: fn(&mut D, AttrValue),
}

impl<D> AttrDef<D> {
    /// Checks a value against this row's kind and range, returning it ready for `set`.
    pub fn check(&self, v: AttrValue) -> Result<AttrValue, AttrError> {
        let keyword = self.keyword;
        match (self.kind, v) {
            (AttrKind::IntOrWord { .. }, AttrValue::Int(WORD_VALUE)) => {
                Ok(AttrValue::Int(WORD_VALUE))
            }
            (AttrKind::IntOrWord { word, .. }, AttrValue::Text(s))
                if s.eq_ignore_ascii_case(word) =>
            {
                Ok(AttrValue::Int(WORD_VALUE))
            }
            (
                AttrKind::Int { min, max } | AttrKind::IntOrWord { min, max, .. },
                AttrValue::Int(n),
            ) => {
                if n < min || n > max {
                    Err(AttrError::OutOfRange {
                        keyword,
                        value: n.into(),
                        min,
                        max,
                    })
                } else {
                    Ok(AttrValue::Int(n))
                }
            }
            (AttrKind::Text { max_len }, AttrValue::Text(s)) => {
                if s.len() > max_len {
                    Err(AttrError::TooLong {
                        keyword,
                        len: s.len(),
                        max: max_len,
                    })
                } else {
                    Ok(AttrValue::Text(s))
                }
            }
            (AttrKind::Checked { max_len, rule }, AttrValue::Text(s)) => {
                if s.len() > max_len {
                    return Err(AttrError::TooLong {
                        keyword,
                        len: s.len(),
                        max: max_len,
                    });
                }
                match rule.check(&s) {
                    Ok(()) => Ok(AttrValue::Text(s)),
                    Err(reason) => Err(AttrError::Refused {
                        keyword,
                        value: s,
                        reason,
                    }),
                }
            }
            (AttrKind::Name { max_len }, AttrValue::Text(s)) => {
                let trimmed = s.trim_end().to_string();
                if trimmed.is_empty() {
                    return Ok(AttrValue::Text(trimmed));
                }
                if trimmed.len() > max_len {
                    return Err(AttrError::TooLong {
                        keyword,
                        len: trimmed.len(),
                        max: max_len,
                    });
                }
                ferry_mqi::validate_object_name(&trimmed)
                    .map_err(|source| AttrError::BadName { keyword, source })?;
                Ok(AttrValue::Text(trimmed))
            }
            (AttrKind::Keyword { values }, AttrValue::Text(s)) => {
                let upper = s.to_ascii_uppercase();
                values
                    .iter()
                    .find(|v| **v == upper)
                    .map(|v| AttrValue::Keyword(v))
                    .ok_or_else(|| AttrError::BadKeyword {
                        keyword,
                        value: s,
                        allowed: values.join(", "),
                    })
            }
            (AttrKind::Keyword { values }, AttrValue::Keyword(k)) if values.contains(&k) => {
                Ok(AttrValue::Keyword(k))
            }
            (AttrKind::KeywordList { values, max }, AttrValue::Text(s)) => {
                check_keyword_list(keyword, values, max, &s).map(AttrValue::Text)
            }
            (AttrKind::KeywordList { values, max }, AttrValue::Keyword(k)) => {
                check_keyword_list(keyword, values, max, k).map(AttrValue::Text)
            }
            (AttrKind::NameList { max_len, max }, AttrValue::Text(s)) => {
                check_name_list(keyword, max_len, max, &s).map(AttrValue::Text)
            }
            (AttrKind::Flag { .. }, AttrValue::Flag(b)) => Ok(AttrValue::Flag(b)),
            (kind, _) => Err(AttrError::WrongKind {
                keyword,
                expected: kind.describe(),
            }),
        }
    }

    /// True when the row applies to a subtype with bit `subtype`.
    pub fn applies_to(&self, subtype: u32) -> bool {
        self.applies & subtype != 0
    }
}

/// Checks a list of keywords written with commas or blanks between them: each one of
/// `values`, none twice, at most `max`. Returns the list as DISPLAY shows it.
fn check_keyword_list(
    keyword: &'static str,
    values: &'static [&'static str],
    max: usize,
    text: &str,
) -> Result<String, AttrError> {
    let mut list: Vec<&'static str> = Vec::new();
    let words = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty());
    for word in words {
        let upper = word.to_ascii_uppercase();
        let Some(v) = values.iter().find(|v| **v == upper) else {
            return Err(AttrError::BadKeyword {
                keyword,
                value: word.to_string(),
                allowed: values.join(", "),
            });
        };
        if list.contains(v) {
            return Err(AttrError::Refused {
                keyword,
                value: text.to_string(),
                reason: format!("{v} is listed twice"),
            });
        }
        list.push(v);
    }
    if list.is_empty() || list.len() > max {
        return Err(AttrError::Refused {
            keyword,
            value: text.to_string(),
            reason: format!("give from 1 to {max} values"),
        });
    }
    Ok(list.join(","))
}

/// Checks a list of object names written with commas or blanks between them: each a
/// valid MQ object name of at most `max_len` characters, at most `max` of them (none is
/// allowed). Returns the list as DISPLAY shows it, the names joined by commas.
fn check_name_list(
    keyword: &'static str,
    max_len: usize,
    max: usize,
    text: &str,
) -> Result<String, AttrError> {
    let names: Vec<&str> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    if names.len() > max {
        return Err(AttrError::Refused {
            keyword,
            value: text.to_string(),
            reason: format!("give at most {max} names"),
        });
    }
    for name in &names {
        if name.len() > max_len {
            return Err(AttrError::TooLong {
                keyword,
                len: name.len(),
                max: max_len,
            });
        }
        ferry_mqi::validate_object_name(name)
            .map_err(|source| AttrError::BadName { keyword, source })?;
    }
    Ok(names.join(","))
}

impl AttrKind {
    /// "a number from 0 to 9", "ENABLED or DISABLED", ...: for messages and docs.
    pub fn describe(&self) -> String {
        match self {
            AttrKind::Int { min, max } => format!("a number from {min} to {max}"),
            AttrKind::IntOrWord { min, max, word } => {
                format!("a number from {min} to {max}, or {word}")
            }
            AttrKind::Text { max_len } => format!("text of up to {max_len} characters"),
            AttrKind::Checked { max_len, rule } => {
                format!("{} of up to {max_len} characters", rule.describe())
            }
            AttrKind::Name { max_len } => format!("a name of up to {max_len} characters"),
            AttrKind::Keyword { values } => values.join(" or "),
            AttrKind::KeywordList { values, max } => {
                format!("a list of up to {max} of {}", values.join(", "))
            }
            AttrKind::NameList { max_len, max } => {
                format!("a list of up to {max} names of up to {max_len} characters")
            }
            AttrKind::Flag { on, off } => format!("{on} or {off}"),
        }
    }
}

/// A definition type with an attribute table: lets MQSC, DISPLAY and MQINQ work generically.
pub trait AttributeSet: Sized + 'static {
    /// The table of this definition type.
    fn table() -> &'static [AttrDef<Self>];

    /// The row for an MQSC keyword (either keyword of a flag pair), with the flag value
    /// the keyword stands for.
    fn lookup(keyword: &str) -> Option<(&'static AttrDef<Self>, Option<bool>)> {
        let upper = keyword.to_ascii_uppercase();
        Self::table().iter().find_map(|row| match row.kind {
            AttrKind::Flag { on, .. } if on == upper => Some((row, Some(true))),
            AttrKind::Flag { off, .. } if off == upper => Some((row, Some(false))),
            _ if row.keyword == upper => Some((row, None)),
            _ => None,
        })
    }

    /// The row answering an MQINQ selector.
    fn by_selector(selector: ferry_mqi::Selector) -> Option<&'static AttrDef<Self>> {
        Self::table().iter().find(|r| r.selector == Some(selector))
    }
}

/// Keyword enums: a Rust enum whose variants map one-to-one to MQSC keywords.
#[macro_export]
macro_rules! keyword_enum {
    ($(#[$meta:meta])* $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $kw:literal ),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name { $( $(#[$vmeta])* $variant, )+ }

        impl $name {
            /// The MQSC keywords, in declaration order.
            pub const KEYWORDS: &'static [&'static str] = &[ $( $kw, )+ ];

            /// The MQSC keyword of this value.
            pub fn keyword(self) -> &'static str {
                match self { $( $name::$variant => $kw, )+ }
            }

            /// The value for an MQSC keyword (upper case).
            pub fn from_keyword(kw: &str) -> Option<Self> {
                match kw { $( $kw => Some($name::$variant), )+ _ => None }
            }
        }

        impl $crate::AttrType for $name {
            fn to_value(&self) -> $crate::AttrValue {
                $crate::AttrValue::Keyword(self.keyword())
            }
            fn from_value(v: $crate::AttrValue) -> Option<Self> {
                match v {
                    $crate::AttrValue::Keyword(k) => Self::from_keyword(k),
                    _ => None,
                }
            }
        }
    };
}

/// Generates a typed attribute struct, its `Default`, and its static attribute table.
#[macro_export]
macro_rules! attribute_table {
    (
        $(#[$smeta:meta])*
        pub struct $Attrs:ident;
        pub static $TABLE:ident;
        $(
            $field:ident : $ty:ty = $kw:literal, $kind:expr, default $default:expr,
                applies $applies:expr, inq $sel:expr, $ro:ident, $doc:literal;
        )*
    ) => {
        $(#[$smeta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default)]
        pub struct $Attrs {
            $( #[doc = $doc] pub $field: $ty, )*
        }

        impl Default for $Attrs {
            fn default() -> Self {
                $Attrs { $( $field: $default, )* }
            }
        }

        #[doc = concat!("The attribute table of [`", stringify!($Attrs), "`]: one row per attribute.")]
        pub static $TABLE: &[$crate::AttrDef<$Attrs>] = &[
            $(
                $crate::AttrDef {
                    keyword: $kw,
                    kind: $kind,
                    applies: $applies,
                    selector: $sel,
                    read_only: $crate::attribute_table!(@ro $ro),
                    doc: $doc,
                    default: || { let d: $ty = $default; $crate::AttrType::to_value(&d) },
                    get: |a: &$Attrs| $crate::AttrType::to_value(&a.$field),
                    set: |a: &mut $Attrs, v| {
                        if let Some(x) = <$ty as $crate::AttrType>::from_value(v) {
                            a.$field = x;
                        }
                    },
                },
            )*
        ];

        impl $crate::AttributeSet for $Attrs {
            fn table() -> &'static [$crate::AttrDef<Self>] {
                $TABLE
            }
        }
    };
    (@ro rw) => { false };
    (@ro ro) => { true };
}
