//! When a connection must prove its user id with a password: MQ's CHCKCLNT (client
//! connections) and CHCKLOCL (local ones) of the CONNAUTH AUTHINFO object, tightened by the
//! CHCKCLNT of the CHLAUTH record that let the connection in.

use crate::chlauth::CheckClient;

/// CHCKCLNT / CHCKLOCL of an AUTHINFO object (MQCHK_*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CheckLevel {
    /// NONE: credentials are not checked, even when given.
    #[serde(rename = "NONE")]
    None,
    /// OPTIONAL: credentials need not be given; given ones must be valid.
    #[default]
    #[serde(rename = "OPTIONAL")]
    Optional,
    /// REQUIRED: every connection gives a valid user id and password.
    #[serde(rename = "REQUIRED")]
    Required,
    /// REQDADM: administrators must give a valid user id and password; others as OPTIONAL.
    #[serde(rename = "REQDADM")]
    RequiredForAdmin,
}

impl CheckLevel {
    /// The MQSC keywords, in declaration order.
    pub const KEYWORDS: &'static [&'static str] = &["NONE", "OPTIONAL", "REQUIRED", "REQDADM"];

    /// The MQSC keyword.
    pub fn keyword(self) -> &'static str {
        Self::KEYWORDS[self as usize]
    }

    /// The level named by `keyword` (upper case).
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        match keyword {
            "NONE" => Some(CheckLevel::None),
            "OPTIONAL" => Some(CheckLevel::Optional),
            "REQUIRED" => Some(CheckLevel::Required),
            "REQDADM" => Some(CheckLevel::RequiredForAdmin),
            _ => None,
        }
    }
}

/// What to do with a connection's credentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CredentialCheck {
    /// Let it in without looking at any password.
    Skip,
    /// Check the user id and password given.
    Verify,
    /// Refuse: a password was needed and none was given.
    Missing,
}

/// Decides for one connection. `given`: whether it sent a user id and password (MQCSP,
/// SASL PLAIN); `privileged`: whether the user id it asserts is an administrator.
pub fn credential_check(
    level: CheckLevel,
    record: CheckClient,
    given: bool,
    privileged: bool,
) -> CredentialCheck {
    if level == CheckLevel::None {
        return CredentialCheck::Skip;
    }
    let required = match (level, record) {
        (CheckLevel::Required, _) | (_, CheckClient::Required) => true,
        (CheckLevel::RequiredForAdmin, _) | (_, CheckClient::RequiredForAdmin) => privileged,
        _ => false,
    };
    match (given, required) {
        (true, _) => CredentialCheck::Verify,
        (false, true) => CredentialCheck::Missing,
        (false, false) => CredentialCheck::Skip,
    }
}

/// The user id a client connection runs as, in MQ's order of precedence: a CHLAUTH
/// record's USERSRC(MAP) MCAUSER, the channel's MCAUSER, the user id a password proved
/// when the AUTHINFO has ADOPTCTX(YES), and last the one the client asserted.
pub fn effective_user(
    mapped: Option<&str>,
    channel_mca_user: &str,
    adopted: Option<&str>,
    asserted: &str,
) -> String {
    mapped
        .filter(|u| !u.is_empty())
        .or((!channel_mca_user.is_empty()).then_some(channel_mca_user))
        .or(adopted)
        .unwrap_or(asserted)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use CredentialCheck::*;

    #[test]
    fn check_levels_as_mq_documents_them() {
        let c = credential_check;
        assert_eq!(c(CheckLevel::None, CheckClient::Required, true, true), Skip);
        assert_eq!(
            c(CheckLevel::Optional, CheckClient::AsQmgr, false, true),
            Skip
        );
        assert_eq!(
            c(CheckLevel::Optional, CheckClient::AsQmgr, true, false),
            Verify
        );
        assert_eq!(
            c(CheckLevel::Required, CheckClient::AsQmgr, false, false),
            Missing
        );
        assert_eq!(
            c(
                CheckLevel::RequiredForAdmin,
                CheckClient::AsQmgr,
                false,
                true
            ),
            Missing
        );
        assert_eq!(
            c(
                CheckLevel::RequiredForAdmin,
                CheckClient::AsQmgr,
                false,
                false
            ),
            Skip
        );
        // A CHLAUTH record tightens, never loosens.
        assert_eq!(
            c(CheckLevel::Optional, CheckClient::Required, false, false),
            Missing
        );
        assert_eq!(
            c(
                CheckLevel::Optional,
                CheckClient::RequiredForAdmin,
                false,
                true
            ),
            Missing
        );
        assert_eq!(
            c(
                CheckLevel::Required,
                CheckClient::RequiredForAdmin,
                false,
                false
            ),
            Missing
        );
    }

    #[test]
    fn mapping_wins_then_mcauser_then_the_adopted_user() {
        assert_eq!(effective_user(Some("m"), "ch", Some("a"), "x"), "m");
        assert_eq!(effective_user(None, "ch", Some("a"), "x"), "ch");
        assert_eq!(effective_user(None, "", Some("a"), "x"), "a");
        assert_eq!(effective_user(None, "", None, "x"), "x");
    }
}
