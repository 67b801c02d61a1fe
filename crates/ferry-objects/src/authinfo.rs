//! Authentication information objects (DEFINE AUTHINFO): how the queue manager checks the
//! user ids and passwords connections give (CONNAUTH names one).
//!
//! AUTHTYPE(IDPWOS) checks them against the queue manager's user repository (and, as MQ
//! does, the host's users); AUTHTYPE(IDPWLDAP) against an LDAP directory (a search for the
//! user's entry, then a bind as it), and with AUTHORMD other than OS the directory also
//! gives users their groups for object authorities. CRLLDAP and OCSP (certificate
//! revocation) are MQ's other types; Ferry refuses them at DEFINE until it has them.

use crate::attribute::AttrKind::{Int, Keyword, Text};
use crate::{attribute_table, keyword_enum, AttrType, AttrValue};
use ferry_security::connauth::CheckLevel;

/// Applies to AUTHTYPE(IDPWOS).
pub const IDPWOS: u32 = 1;
/// Applies to AUTHTYPE(IDPWLDAP).
pub const IDPWLDAP: u32 = 2;
/// Applies to both password-checking types.
const IDPW: u32 = IDPWOS | IDPWLDAP;

/// The AUTHINFO object a new queue manager's CONNAUTH names.
pub const DEFAULT_IDPWOS: &str = "SYSTEM.DEFAULT.AUTHINFO.IDPWOS";

keyword_enum! {
    /// AUTHTYPE: what the object checks against.
    AuthInfoType { IdPwOs = "IDPWOS", IdPwLdap = "IDPWLDAP" }
}

keyword_enum! {
    /// SECCOMM: how the queue manager talks to the LDAP server.
    SecureComms { No = "NO", Yes = "YES", Anonymous = "ANON" }
}

keyword_enum! {
    /// ADOPTCTX: whether the user id a password proved becomes the connection's.
    AdoptContext { No = "NO", Yes = "YES" }
}

keyword_enum! {
    /// AUTHENMD: how IDPWOS checks a host user's password.
    AuthenticationMethod { Os = "OS", Pam = "PAM" }
}

keyword_enum! {
    /// AUTHORMD: where users' groups for object authorities come from.
    AuthorizationMethod {
        /// The host's groups (and the user repository's).
        Os = "OS",
        /// Group entries whose FINDGRP attribute lists the user's DN (groupOfNames).
        SearchGroup = "SEARCHGRP",
        /// The user entry's FINDGRP attribute lists its groups' DNs (memberOf).
        SearchUser = "SEARCHUSR",
        /// Group entries whose FINDGRP attribute lists the user's short name (posixGroup).
        SearchGroupShortName = "SRCHGRPSN"
    }
}

keyword_enum! {
    /// NESTGRP: whether groups that hold a user's groups count too.
    GroupNesting { No = "NO", Yes = "YES" }
}

impl AuthorizationMethod {
    /// FINDGRP when it is blank: the attribute usually holding memberships for this
    /// method (None for OS, which reads no directory).
    pub fn default_membership_attribute(self) -> Option<&'static str> {
        match self {
            AuthorizationMethod::Os => None,
            AuthorizationMethod::SearchGroup => Some("member"),
            AuthorizationMethod::SearchUser => Some("memberOf"),
            AuthorizationMethod::SearchGroupShortName => Some("memberUid"),
        }
    }
}

/// The object class of group entries when CLASSGRP is blank (MQ's default).
pub const DEFAULT_GROUP_CLASS: &str = "groupOfNames";

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
            AuthInfoType::IdPwLdap => IDPWLDAP,
        }
    }

    /// The types MQ has and Ferry does not yet (DEFINE answers FRY9002E).
    pub const LATER: &'static [&'static str] = &["CRLLDAP", "OCSP"];
}

attribute_table! {
    /// The attributes of an authentication information object.
    pub struct AuthInfoAttributes;
    pub static AUTHINFO_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies IDPW, inq None, rw, "Description for operators.";
    check_client: CheckLevel = "CHCKCLNT", Keyword { values: CheckLevel::KEYWORDS }, default CheckLevel::RequiredForAdmin,
        applies IDPW, inq None, rw, "Client connections: NONE (passwords not checked), OPTIONAL (checked when given), REQUIRED (always), REQDADM (administrators must give one).";
    check_local: CheckLevel = "CHCKLOCL", Keyword { values: CheckLevel::KEYWORDS }, default CheckLevel::Optional,
        applies IDPW, inq None, rw, "Local (bindings) connections, with CHCKCLNT's values.";
    adopt_context: AdoptContext = "ADOPTCTX", Keyword { values: AdoptContext::KEYWORDS }, default AdoptContext::No,
        applies IDPW, inq None, rw, "YES: the user id a password proved is the connection's (authorities, message context) unless an MCAUSER or CHLAUTH mapping sets one.";
    fail_delay: i32 = "FAILDLAY", Int { min: 0, max: 60 }, default 1,
        applies IDPW, inq None, rw, "Seconds before a failed check is answered, to slow password guessing.";
    authentication_method: AuthenticationMethod = "AUTHENMD", Keyword { values: AuthenticationMethod::KEYWORDS }, default AuthenticationMethod::Os,
        applies IDPWOS, inq None, rw, "How host users' passwords are checked: both through PAM service ferry (the user repository is read first).";
    conname: String = "CONNAME", Text { max_len: 264 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "The LDAP server, host(port) (port 389 when left out, 636 with SECCOMM(YES|ANON)); a comma-separated list is tried in order.";
    ldap_user: String = "LDAPUSER", Text { max_len: 1024 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Distinguished name the queue manager binds as to search for users (blank: anonymous).";
    ldap_password: String = "LDAPPWD", Text { max_len: 256 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "LDAPUSER's password (DISPLAY shows ******** when set).";
    secure_comms: SecureComms = "SECCOMM", Keyword { values: SecureComms::KEYWORDS }, default SecureComms::No,
        applies IDPWLDAP, inq None, rw, "NO: plain LDAP. YES: LDAP over TLS (ldaps), the server's certificate checked against trust.pem in the key repository and its host name against CONNAME, the queue manager's certificate presented when the server asks. ANON: TLS without presenting one. Read at REFRESH SECURITY TYPE(CONNAUTH).";
    base_dn_user: String = "BASEDNU", Text { max_len: 1024 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Where users are searched for (base DN).";
    class_user: String = "CLASSUSR", Text { max_len: 128 }, default "inetOrgPerson".to_string(),
        applies IDPWLDAP, inq None, rw, "Object class of user entries.";
    short_user: String = "SHORTUSR", Text { max_len: 64 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Attribute holding the short user id the connection runs as (e.g. uid; blank: the user id given).";
    user_field: String = "USRFIELD", Text { max_len: 64 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Attribute matched against a user id that is not a DN (e.g. uid; blank: SHORTUSR).";
    authorization_method: AuthorizationMethod = "AUTHORMD", Keyword { values: AuthorizationMethod::KEYWORDS }, default AuthorizationMethod::Os,
        applies IDPWLDAP, inq None, rw, "Where users' groups for object authorities come from: OS (the host's), SEARCHGRP (group entries listing the user's DN), SEARCHUSR (the user entry listing its groups), SRCHGRPSN (group entries listing the user's short name).";
    base_dn_group: String = "BASEDNG", Text { max_len: 1024 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Where groups are searched for (base DN; needed by SEARCHGRP and SRCHGRPSN).";
    class_group: String = "CLASSGRP", Text { max_len: 128 }, default DEFAULT_GROUP_CLASS.to_string(),
        applies IDPWLDAP, inq None, rw, "Object class of group entries (blank: groupOfNames).";
    find_group: String = "FINDGRP", Text { max_len: 128 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Attribute holding memberships (blank: member for SEARCHGRP, memberOf for SEARCHUSR, memberUid for SRCHGRPSN).";
    group_field: String = "GRPFIELD", Text { max_len: 128 }, default String::new(),
        applies IDPWLDAP, inq None, rw, "Attribute of a group entry holding the group's short name, used in authority records (e.g. cn; blank: the group's DN).";
    nested_groups: GroupNesting = "NESTGRP", Keyword { values: GroupNesting::KEYWORDS }, default GroupNesting::No,
        applies IDPWLDAP, inq None, rw, "YES: groups that hold a user's groups count too (up to 8 levels).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies IDPW, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies IDPW, inq None, ro, "Time of the last change (hh.mm.ss).";
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
