//! Why an administrative operation (DEFINE, ALTER, DELETE, CLEAR, START...) failed.
//!
//! The engine returns these; MQSC turns each into its numbered FRY message. Each carries
//! the MQ reason code an administrator would search for.

use ferry_mqi::ReasonCode;

/// A refused administrative operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdminError {
    /// No object of that type and name.
    #[error("object {name} not found")]
    NotFound {
        /// The name given.
        name: String,
    },
    /// An object of that name exists (DEFINE without REPLACE, or another type).
    #[error("object {name} already exists")]
    AlreadyExists {
        /// The name given.
        name: String,
    },
    /// The object exists with another type (e.g. ALTER QLOCAL of an alias).
    #[error("object {name} is of another type")]
    TypeMismatch {
        /// The name given.
        name: String,
    },
    /// The object is open, or has uncommitted work.
    #[error("object {name} is in use")]
    InUse {
        /// The name given.
        name: String,
    },
    /// The queue holds messages (DELETE without PURGE).
    #[error("queue {name} is not empty")]
    NotEmpty {
        /// The name given.
        name: String,
    },
    /// The request is not valid (bad combination, reserved name...), with the reason.
    #[error("{0}")]
    Invalid(String),
    /// Another failure with its reason code.
    #[error("{reason}: {text}")]
    Failed {
        /// The MQ reason code.
        reason: ReasonCode,
        /// What happened.
        text: String,
    },
}

impl From<ferry_security::chlauth::ChlauthError> for AdminError {
    /// SET CHLAUTH's refusals: a record that is not there (REMOVE) or is there already
    /// (ADD) carry MQ's reason codes; the others say what is wrong with the record.
    fn from(e: ferry_security::chlauth::ChlauthError) -> Self {
        use ferry_security::chlauth::ChlauthError;
        match e {
            ChlauthError::NotFound => AdminError::Failed {
                reason: ReasonCode::UnknownObjectName,
                text: e.to_string(),
            },
            ChlauthError::Exists => AdminError::Failed {
                reason: ReasonCode::ObjectAlreadyExists,
                text: e.to_string(),
            },
            other => AdminError::Invalid(other.to_string()),
        }
    }
}

impl AdminError {
    /// The MQ reason code of the failure.
    pub fn reason(&self) -> ReasonCode {
        match self {
            AdminError::NotFound { .. } => ReasonCode::UnknownObjectName,
            AdminError::AlreadyExists { .. } => ReasonCode::ObjectAlreadyExists,
            AdminError::TypeMismatch { .. } => ReasonCode::ObjectTypeError,
            AdminError::InUse { .. } => ReasonCode::ObjectInUse,
            AdminError::NotEmpty { .. } => ReasonCode::QNotEmpty,
            AdminError::Invalid(_) => ReasonCode::OptionsError,
            AdminError::Failed { reason, .. } => *reason,
        }
    }
}
