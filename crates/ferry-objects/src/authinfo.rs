//! Authentication information objects (DEFINE AUTHINFO): how the queue manager checks the
//! user ids and passwords connections give (CONNAUTH names one).
//!
//! AUTHTYPE(IDPWOS) checks them against the queue manager's user repository (and, as MQ
//! does, the host's users). AUTHTYPE(IDPWLDAP) (an LDAP directory), CRLLDAP and OCSP
//! (certificate revocation) are MQ's other types; Ferry refuses them at DEFINE until it has
//! them.

use crate::attribute::AttrKind::{Int, Keyword, Text};
use crate::{attribute_table, keyword_enum, AttrType, AttrValue};
use ferry_security::connauth::CheckLevel;

/// Applies to AUTHTYPE(IDPWOS).
pub const IDPWOS: u32 = 1;

/// The AUTHINFO object a new queue manager's CONNAUTH names.
pub const DEFAULT_IDPWOS: &str = "SYSTEM.DEFAULT.AUTHINFO.IDPWOS";

keyword_enum! {
    /// AUTHTYPE: what the object checks against.
    AuthInfoType { IdPwOs = "IDPWOS" }
}

keyword_enum! {
    /// ADOPTCTX: whether the user id a password proved becomes the connection's.
    AdoptContext { No = "NO", Yes = "YES" }
}

keyword_enum! {
    /// AUTHENMD: how IDPWOS checks a host user's password.
    AuthenticationMethod { Os = "OS", Pam = "PAM" }
}

impl AttrType for CheckLevel {
    fn to_value(&self) -> AttrValue {
        AttrValue::Keyword(self.keyword())
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Keyword(k) => Self::from_keyword(k),
            _ => None,
        }
    }
}

impl AuthInfoType {
    /// The bit the attribute table's `applies` uses for this type.
    pub fn mask(self) -> u32 {
        match self {
            AuthInfoType::IdPwOs => IDPWOS,
        }
    }

    /// The types MQ has and Ferry does not yet (DEFINE answers FRY9002E).
    pub const LATER: &'static [&'static str] = &["IDPWLDAP", "CRLLDAP", "OCSP"];
}

attribute_table! {
    /// The attributes of an authentication information object.
    pub struct AuthInfoAttributes;
    pub static AUTHINFO_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies IDPWOS, inq None, rw, "Description for operators.";
    check_client: CheckLevel = "CHCKCLNT", Keyword { values: CheckLevel::KEYWORDS }, default CheckLevel::RequiredForAdmin,
        applies IDPWOS, inq None, rw, "Client connections: NONE (passwords not checked), OPTIONAL (checked when given), REQUIRED (always), REQDADM (administrators must give one).";
    check_local: CheckLevel = "CHCKLOCL", Keyword { values: CheckLevel::KEYWORDS }, default CheckLevel::Optional,
        applies IDPWOS, inq None, rw, "Local (bindings) connections, with CHCKCLNT's values.";
    adopt_context: AdoptContext = "ADOPTCTX", Keyword { values: AdoptContext::KEYWORDS }, default AdoptContext::No,
        applies IDPWOS, inq None, rw, "YES: the user id a password proved is the connection's (authorities, message context) unless an MCAUSER or CHLAUTH mapping sets one.";
    fail_delay: i32 = "FAILDLAY", Int { min: 0, max: 60 }, default 1,
        applies IDPWOS, inq None, rw, "Seconds before a failed check is answered, to slow password guessing.";
    authentication_method: AuthenticationMethod = "AUTHENMD", Keyword { values: AuthenticationMethod::KEYWORDS }, default AuthenticationMethod::Os,
        applies IDPWOS, inq None, rw, "How host users' passwords are checked: both through PAM service ferry (the user repository is read first).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies IDPWOS, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies IDPWOS, inq None, ro, "Time of the last change (hh.mm.ss).";
}

/// An authentication information object: name, type and attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AuthInfoDefinition {
    /// Its name.
    pub name: String,
    /// AUTHTYPE.
    pub auth_type: AuthInfoType,
    /// Every attribute of the table.
    pub attributes: AuthInfoAttributes,
}

impl AuthInfoDefinition {
    /// A definition with MQ's defaults.
    pub fn new(name: impl Into<String>, auth_type: AuthInfoType) -> Self {
        AuthInfoDefinition {
            name: name.into(),
            auth_type,
            attributes: AuthInfoAttributes::default(),
        }
    }
}
