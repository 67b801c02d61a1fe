//! One channel authentication record (`SET CHLAUTH`): what it matches and what it does,
//! and the checks SET makes before a record is kept.

use super::address::{AddressError, AddressPattern};
use super::generic_name::GenericName;
use crate::peer_name::{PeerNameError, PeerNameFilter};

/// The longest channel name, and so the longest profile (MQ_CHANNEL_NAME_LENGTH).
pub const MAX_PROFILE_LEN: usize = 20;
/// The longest user id in a record (CLNTUSER, MCAUSER, USERLIST entries; MQ's 12 on Unix
/// channels is kept for the user ids a record maps to, but client user ids may be longer).
pub const MAX_USER_LEN: usize = 64;
/// The most entries in a USERLIST or ADDRLIST, as MQ.
pub const MAX_LIST_ENTRIES: usize = 100;
/// The longest DESCR.
pub const MAX_DESCR_LEN: usize = 64;
/// The longest SSLPEER or SSLCERTI filter.
pub const MAX_PEER_LEN: usize = 1024;
/// The USERLIST entry that stands for every privileged user.
pub const ANY_ADMIN: &str = "*MQADMIN";

/// TYPE: what a record is (MQCAUT_* values).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ChlauthType {
    /// BLOCKUSER (1): refuse connections whose final user id is listed.
    #[serde(rename = "BLOCKUSER")]
    BlockUser,
    /// BLOCKADDR (2): refuse connections from the listed addresses, at the listener.
    #[serde(rename = "BLOCKADDR")]
    BlockAddr,
    /// SSLPEERMAP (3): map by the partner certificate's subject DN.
    #[serde(rename = "SSLPEERMAP")]
    SslPeerMap,
    /// ADDRESSMAP (4): map by the partner's IP address.
    #[serde(rename = "ADDRESSMAP")]
    AddressMap,
    /// USERMAP (5): map by the user id the client asserts (client channels).
    #[serde(rename = "USERMAP")]
    UserMap,
    /// QMGRMAP (6): map by the partner queue manager's name (message channels).
    #[serde(rename = "QMGRMAP")]
    QmgrMap,
}

impl ChlauthType {
    /// Every type, in MQ's MQCAUT order.
    pub const ALL: [ChlauthType; 6] = [
        ChlauthType::BlockUser,
        ChlauthType::BlockAddr,
        ChlauthType::SslPeerMap,
        ChlauthType::AddressMap,
        ChlauthType::UserMap,
        ChlauthType::QmgrMap,
    ];

    /// The MQSC keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            ChlauthType::BlockUser => "BLOCKUSER",
            ChlauthType::BlockAddr => "BLOCKADDR",
            ChlauthType::SslPeerMap => "SSLPEERMAP",
            ChlauthType::AddressMap => "ADDRESSMAP",
            ChlauthType::UserMap => "USERMAP",
            ChlauthType::QmgrMap => "QMGRMAP",
        }
    }

    /// The type named by `keyword` (upper case).
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.keyword() == keyword)
    }

    /// The MQCAUT_* value.
    pub fn value(self) -> i32 {
        match self {
            ChlauthType::BlockUser => 1,
            ChlauthType::BlockAddr => 2,
            ChlauthType::SslPeerMap => 3,
            ChlauthType::AddressMap => 4,
            ChlauthType::UserMap => 5,
            ChlauthType::QmgrMap => 6,
        }
    }

    /// True for the mapping types (they carry USERSRC).
    pub fn is_mapping(self) -> bool {
        !matches!(self, ChlauthType::BlockUser | ChlauthType::BlockAddr)
    }

    /// The order mapping types are considered in for one profile: a record naming the
    /// partner's certificate is more specific than one naming its user, queue manager
    /// or address.
    pub(crate) fn mapping_rank(self) -> u8 {
        match self {
            ChlauthType::SslPeerMap => 0,
            ChlauthType::UserMap | ChlauthType::QmgrMap => 1,
            ChlauthType::AddressMap => 2,
            ChlauthType::BlockUser | ChlauthType::BlockAddr => 3,
        }
    }
}

/// USERSRC: where a mapping record takes the user id from (MQUSRC_*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UserSource {
    /// MAP (0): the record's MCAUSER.
    #[default]
    #[serde(rename = "MAP")]
    Map,
    /// NOACCESS (1): refuse the connection.
    #[serde(rename = "NOACCESS")]
    NoAccess,
    /// CHANNEL (2): the channel's MCAUSER, or the user id the partner flowed.
    #[serde(rename = "CHANNEL")]
    Channel,
}

impl UserSource {
    /// The MQSC keywords.
    pub const KEYWORDS: &'static [&'static str] = &["MAP", "NOACCESS", "CHANNEL"];

    /// The MQSC keyword.
    pub fn keyword(self) -> &'static str {
        Self::KEYWORDS[self as usize]
    }

    /// The value named by `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        match keyword {
            "MAP" => Some(UserSource::Map),
            "NOACCESS" => Some(UserSource::NoAccess),
            "CHANNEL" => Some(UserSource::Channel),
            _ => None,
        }
    }
}

/// CHCKCLNT on a mapping record: how much password checking connections it maps need,
/// on top of the CONNAUTH AUTHINFO's CHCKCLNT (MQCHK_*; a record can only tighten it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CheckClient {
    /// ASQMGR: as the queue manager's AUTHINFO says.
    #[default]
    #[serde(rename = "ASQMGR")]
    AsQmgr,
    /// REQUIRED: every connection must give a valid user id and password.
    #[serde(rename = "REQUIRED")]
    Required,
    /// REQDADM: privileged users must give a valid user id and password.
    #[serde(rename = "REQDADM")]
    RequiredForAdmin,
}

impl CheckClient {
    /// The MQSC keywords.
    pub const KEYWORDS: &'static [&'static str] = &["ASQMGR", "REQUIRED", "REQDADM"];

    /// The MQSC keyword.
    pub fn keyword(self) -> &'static str {
        Self::KEYWORDS[self as usize]
    }

    /// The value named by `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        match keyword {
            "ASQMGR" => Some(CheckClient::AsQmgr),
            "REQUIRED" => Some(CheckClient::Required),
            "REQDADM" => Some(CheckClient::RequiredForAdmin),
            _ => None,
        }
    }
}

/// One record, as SET CHLAUTH gives it and DISPLAY CHLAUTH shows it. Fields a type does
/// not use are blank.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChlauthRecord {
    /// The channel profile: a channel name, or a generic one with `*`.
    pub profile: String,
    /// TYPE.
    pub kind: ChlauthType,
    /// ADDRESS: the partner address pattern (mapping types; required for ADDRESSMAP).
    #[serde(default)]
    pub address: String,
    /// CLNTUSER: the user id a client asserts (USERMAP).
    #[serde(default)]
    pub client_user: String,
    /// SSLPEER: the certificate subject filter (SSLPEERMAP).
    #[serde(default)]
    pub ssl_peer: String,
    /// SSLCERTI: the certificate issuer filter (SSLPEERMAP, optional).
    #[serde(default)]
    pub ssl_cert_issuer: String,
    /// QMNAME: the partner queue manager pattern (QMGRMAP).
    #[serde(default)]
    pub qmgr_name: String,
    /// USERSRC (mapping types).
    #[serde(default)]
    pub user_source: UserSource,
    /// MCAUSER: the user id USERSRC(MAP) gives.
    #[serde(default)]
    pub mca_user: String,
    /// CHCKCLNT (USERMAP, ADDRESSMAP, SSLPEERMAP).
    #[serde(default)]
    pub check_client: CheckClient,
    /// USERLIST (BLOCKUSER).
    #[serde(default)]
    pub user_list: Vec<String>,
    /// ADDRLIST (BLOCKADDR).
    #[serde(default)]
    pub address_list: Vec<String>,
    /// WARN(YES): log what the record would refuse, and let the connection on.
    #[serde(default)]
    pub warn: bool,
    /// DESCR.
    #[serde(default)]
    pub description: String,
    /// When the record was last set (ms since the epoch), for ALTDATE/ALTTIME.
    #[serde(default)]
    pub altered_ms: u64,
}

/// Why SET CHLAUTH refuses a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChlauthError {
    /// The profile is blank, too long or has characters channel names cannot.
    #[error("'{0}' is not a channel profile: up to 20 characters A-Z a-z 0-9 . / _ % and the wildcard *")]
    Profile(String),
    /// BLOCKADDR on a profile other than '*'.
    #[error("a BLOCKADDR record applies to every channel: its profile must be '*'")]
    BlockAddrProfile,
    /// A parameter the type needs is missing.
    #[error("TYPE({0}) requires {1}")]
    Missing(&'static str, &'static str),
    /// USERSRC(MAP) without MCAUSER.
    #[error("USERSRC(MAP) requires MCAUSER: the user id the record maps connections to")]
    MapWithoutUser,
    /// A list with no entries or too many.
    #[error("{0} takes 1 to {MAX_LIST_ENTRIES} entries, not {1}")]
    ListLength(&'static str, usize),
    /// A value longer than its field allows.
    #[error("{0} is longer than {1} characters")]
    TooLong(&'static str, usize),
    /// A user id with characters a user id cannot have (blanks, quotes, control codes).
    #[error("'{0}' is not a user id")]
    UserId(String),
    /// An address pattern that does not parse.
    #[error("{0}")]
    Address(#[from] AddressError),
    /// An SSLPEER or SSLCERTI filter that does not parse.
    #[error("{0}: {1}")]
    PeerName(&'static str, PeerNameError),
    /// ACTION(ADD) of a record that exists.
    #[error("the record exists already; use ACTION(REPLACE) to change it")]
    Exists,
    /// ACTION(REMOVE) of a record that does not exist.
    #[error("no such channel authentication record")]
    NotFound,
}

/// A record checked and ready to match: its patterns parsed once, when it is set.
#[derive(Clone, Debug)]
pub(crate) struct CompiledRecord {
    pub(crate) record: ChlauthRecord,
    pub(crate) kind: ChlauthType,
    pub(crate) profile: GenericName,
    pub(crate) address: Option<AddressPattern>,
    pub(crate) address_list: Vec<AddressPattern>,
    pub(crate) peer: Option<PeerNameFilter>,
    pub(crate) issuer: Option<PeerNameFilter>,
    pub(crate) qmgr_name: Option<GenericName>,
}

impl ChlauthRecord {
    /// A record of type `kind` for `profile`, every other field blank.
    pub fn new(profile: &str, kind: ChlauthType) -> Self {
        ChlauthRecord {
            profile: profile.to_string(),
            kind,
            address: String::new(),
            client_user: String::new(),
            ssl_peer: String::new(),
            ssl_cert_issuer: String::new(),
            qmgr_name: String::new(),
            user_source: UserSource::Map,
            mca_user: String::new(),
            check_client: CheckClient::AsQmgr,
            user_list: Vec::new(),
            address_list: Vec::new(),
            warn: false,
            description: String::new(),
            altered_ms: 0,
        }
    }

    /// The key that tells records apart: ACTION(ADD) refuses a second record with the
    /// same one, REPLACE and REMOVE find the record by it.
    pub fn key(&self) -> RecordKey {
        let kind = self.kind;
        let detail = match kind {
            ChlauthType::BlockUser | ChlauthType::BlockAddr => String::new(),
            ChlauthType::AddressMap => self.address.clone(),
            ChlauthType::UserMap => self.client_user.clone(),
            ChlauthType::SslPeerMap => format!("{}\u{0}{}", self.ssl_peer, self.ssl_cert_issuer),
            ChlauthType::QmgrMap => self.qmgr_name.clone(),
        };
        RecordKey {
            profile: self.profile.clone(),
            kind,
            detail,
        }
    }

    /// Checks the record as SET CHLAUTH does and parses its patterns.
    pub(crate) fn compile(self) -> Result<CompiledRecord, ChlauthError> {
        check_profile(&self.profile)?;
        let kind = self.kind;
        if self.description.chars().count() > MAX_DESCR_LEN {
            return Err(ChlauthError::TooLong("DESCR", MAX_DESCR_LEN));
        }
        let address = if self.address.trim().is_empty() {
            None
        } else {
            Some(AddressPattern::parse(&self.address)?)
        };
        let mut compiled = CompiledRecord {
            kind,
            profile: GenericName::new(&self.profile),
            address,
            address_list: Vec::new(),
            peer: None,
            issuer: None,
            qmgr_name: None,
            record: self.clone(),
        };
        match kind {
            ChlauthType::BlockUser => {
                check_list("USERLIST", self.user_list.len())?;
                for u in &self.user_list {
                    check_user(u)?;
                }
            }
            ChlauthType::BlockAddr => {
                if self.profile != "*" {
                    return Err(ChlauthError::BlockAddrProfile);
                }
                check_list("ADDRLIST", self.address_list.len())?;
                compiled.address_list = self
                    .address_list
                    .iter()
                    .map(|a| AddressPattern::parse(a))
                    .collect::<Result<_, _>>()?;
            }
            ChlauthType::AddressMap => {
                if compiled.address.is_none() {
                    return Err(ChlauthError::Missing("ADDRESSMAP", "ADDRESS"));
                }
            }
            ChlauthType::UserMap => {
                if self.client_user.is_empty() {
                    return Err(ChlauthError::Missing("USERMAP", "CLNTUSER"));
                }
                check_user(&self.client_user)?;
            }
            ChlauthType::SslPeerMap => {
                if self.ssl_peer.len() > MAX_PEER_LEN || self.ssl_cert_issuer.len() > MAX_PEER_LEN {
                    return Err(ChlauthError::TooLong("SSLPEER", MAX_PEER_LEN));
                }
                compiled.peer = PeerNameFilter::parse(&self.ssl_peer)
                    .map_err(|e| ChlauthError::PeerName("SSLPEER", e))?;
                if compiled.peer.is_none() {
                    return Err(ChlauthError::Missing("SSLPEERMAP", "SSLPEER"));
                }
                compiled.issuer = PeerNameFilter::parse(&self.ssl_cert_issuer)
                    .map_err(|e| ChlauthError::PeerName("SSLCERTI", e))?;
            }
            ChlauthType::QmgrMap => {
                if self.qmgr_name.is_empty() {
                    return Err(ChlauthError::Missing("QMGRMAP", "QMNAME"));
                }
                if self.qmgr_name.len() > 48 {
                    return Err(ChlauthError::TooLong("QMNAME", 48));
                }
                compiled.qmgr_name = Some(GenericName::new(&self.qmgr_name));
            }
        }
        if kind.is_mapping() && self.user_source == UserSource::Map {
            if self.mca_user.is_empty() {
                return Err(ChlauthError::MapWithoutUser);
            }
            check_user(&self.mca_user)?;
        }
        Ok(compiled)
    }
}

/// What identifies a record among the others.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordKey {
    /// The channel profile.
    pub profile: String,
    /// TYPE.
    pub kind: ChlauthType,
    /// The type's matching value (ADDRESS, CLNTUSER, SSLPEER and SSLCERTI, QMNAME).
    pub detail: String,
}

fn check_profile(p: &str) -> Result<(), ChlauthError> {
    let ok = !p.is_empty()
        && p.len() <= MAX_PROFILE_LEN
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '%' | '*'));
    if ok {
        Ok(())
    } else {
        Err(ChlauthError::Profile(p.to_string()))
    }
}

fn check_list(name: &'static str, n: usize) -> Result<(), ChlauthError> {
    if n == 0 || n > MAX_LIST_ENTRIES {
        return Err(ChlauthError::ListLength(name, n));
    }
    Ok(())
}

fn check_user(u: &str) -> Result<(), ChlauthError> {
    if u.chars().count() > MAX_USER_LEN {
        return Err(ChlauthError::TooLong("a user id", MAX_USER_LEN));
    }
    if u.is_empty()
        || u.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '\'')
    {
        return Err(ChlauthError::UserId(u.to_string()));
    }
    Ok(())
}
