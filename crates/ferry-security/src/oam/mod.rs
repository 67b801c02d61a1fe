//! Object authorities, as MQ's object authority manager (OAM) keeps them: authority
//! records (SET AUTHREC, `setmqaut`) that grant users and groups authorities on the
//! objects a profile covers, and the authority they add up to for one principal.
//!
//! The queue manager decides once per MQCONN (CONNECT on the queue manager) and once per
//! MQOPEN (what the open options ask for); the handle then carries the decision, so a
//! put or a get pays nothing for it.

mod authority;
mod object_type;
mod profile;
mod records;

pub use authority::{administration, mqi, Authorities, Authority, AuthorityName, AuthorityRow};
pub use object_type::{ObjectTypeRow, ProfileObjectType};
pub use profile::{Profile, ProfileError, CLASS_PROFILE, MAX_PROFILE_LENGTH, QMGR_PROFILE};
pub use records::{
    check_entity, AuthorityRecords, EntityType, Principal, RecordError, RecordKey,
    SavedAuthorityRecord, MAX_ENTITY_LENGTH,
};
