//! MQOD: which object an open names, and how model queues name their dynamic queues.

use crate::FixedStr;

/// MQOT: object types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ObjectType {
    /// MQOT_Q: a queue (local, alias, model, remote).
    Queue = 1,
    /// MQOT_NAMELIST.
    Namelist = 2,
    /// MQOT_PROCESS.
    Process = 3,
    /// MQOT_Q_MGR: the queue manager itself (for inquire).
    QMgr = 5,
    /// MQOT_CHANNEL.
    Channel = 6,
    /// MQOT_AUTH_INFO.
    AuthInfo = 7,
    /// MQOT_TOPIC.
    Topic = 8,
    /// MQOT_LISTENER.
    Listener = 11,
}

impl ObjectType {
    /// The MQOT number.
    pub fn number(self) -> i32 {
        self as i32
    }

    /// The object type for an MQOT number.
    pub fn from_number(n: i32) -> Option<Self> {
        Some(match n {
            1 => Self::Queue,
            2 => Self::Namelist,
            3 => Self::Process,
            5 => Self::QMgr,
            6 => Self::Channel,
            7 => Self::AuthInfo,
            8 => Self::Topic,
            11 => Self::Listener,
            _ => return None,
        })
    }
}

/// MQOD: the object descriptor given to open and put1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectDescriptor {
    /// What kind of object.
    pub object_type: ObjectType,
    /// Its name (blank for the queue manager).
    pub object_name: FixedStr<48>,
    /// Owning queue manager (blank: this one).
    pub object_qmgr_name: FixedStr<48>,
    /// Name for a dynamic queue made from a model; `*` at the end becomes a unique suffix.
    pub dynamic_q_name: FixedStr<48>,
    /// Alternate user id.
    pub alternate_user_id: FixedStr<12>,
}

impl ObjectDescriptor {
    /// A descriptor naming queue `name`.
    pub fn queue(name: &str) -> Result<Self, crate::NameError> {
        Ok(ObjectDescriptor {
            object_name: FixedStr::new(name)?,
            ..Self::default()
        })
    }
}

impl Default for ObjectDescriptor {
    /// MQOD_DEFAULT: a queue, dynamic name `AMQ.*`.
    fn default() -> Self {
        ObjectDescriptor {
            object_type: ObjectType::Queue,
            object_name: FixedStr::BLANK,
            object_qmgr_name: FixedStr::BLANK,
            dynamic_q_name: FixedStr::from_bytes({
                let mut b = [b' '; 48];
                b[0] = b'A';
                b[1] = b'M';
                b[2] = b'Q';
                b[3] = b'.';
                b[4] = b'*';
                b
            }),
            alternate_user_id: FixedStr::BLANK,
        }
    }
}
