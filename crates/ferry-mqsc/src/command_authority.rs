//! The authority an MQSC command needs, as MQ's command server checks it for a user
//! who is not an administrator: DSP to display an object (or the queue manager's status,
//! connections and security records), CHG to alter it, CRT on the type's `@class`
//! profile to define one, DLT to delete, CLR to clear a queue, CTRL to start and stop
//! channels and listeners and to ping a channel, CTRLX to reset or resolve one, and CHG
//! on the queue manager for ALTER QMGR, SET CHLAUTH, SET and DELETE AUTHREC and REFRESH
//! SECURITY. Subscriptions: CRT on the TOPIC class to
//! define one, CHG on the queue manager to alter or delete one or to clear a retained
//! publication, DSP on the queue manager for DISPLAY SUB, SBSTATUS, TPSTATUS and PUBSUB.
//!
//! A generic DISPLAY (`DISPLAY QLOCAL(APP.*)`) is checked once, against the generic name
//! itself: it needs DSP through a profile that covers that name (`APP.**`, `**`).

use crate::command::Command;
use ferry_objects::channel::ChannelOperation;
use ferry_security::oam::{Authority, ProfileObjectType, CLASS_PROFILE};

/// One authority a command needs on one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needed {
    /// The object's type.
    pub object_type: ProfileObjectType,
    /// Its name (`@class` for CRT; the queue manager's name for the queue manager).
    pub name: String,
    /// The authority.
    pub authority: Authority,
}

/// What `cmd` needs, on queue manager `qmgr`.
pub fn needed(cmd: &Command, qmgr: &str) -> Vec<Needed> {
    use Authority::*;
    use ProfileObjectType as T;
    let on = |object_type: T, name: &str, authority: Authority| {
        vec![Needed {
            object_type,
            name: name.to_string(),
            authority,
        }]
    };
    let class = |object_type: T| on(object_type, CLASS_PROFILE, Crt);
    match cmd {
        Command::DefineQueue { .. } => class(T::Queue),
        Command::AlterQueue { name, .. } => on(T::Queue, name, Chg),
        Command::DeleteQueue { name, .. } => on(T::Queue, name, Dlt),
        Command::ClearQueue { name } => on(T::Queue, name, Clr),
        Command::DisplayQueue { selection, .. } | Command::DisplayQueueStatus { selection, .. } => {
            on(T::Queue, &selection.name.text(), Dsp)
        }
        Command::DefineChannel { .. } => class(T::Channel),
        Command::AlterChannel { name, .. } => on(T::Channel, name, Chg),
        Command::DeleteChannel { name } => on(T::Channel, name, Dlt),
        Command::StartChannel { name } | Command::StopChannel { name, .. } => {
            on(T::Channel, name, Ctrl)
        }
        // MQ: PING needs +ctrl, RESET and RESOLVE +ctrlx.
        Command::OperateChannel { name, operation } => match operation {
            ChannelOperation::Ping { .. } => on(T::Channel, name, Ctrl),
            _ => on(T::Channel, name, Ctrlx),
        },
        Command::DisplayChannel { selection, .. }
        | Command::DisplayChannelStatus { selection, .. } => {
            on(T::Channel, &selection.name.text(), Dsp)
        }
        Command::DefineListener { .. } => class(T::Listener),
        Command::AlterListener { name, .. } => on(T::Listener, name, Chg),
        Command::DeleteListener { name } => on(T::Listener, name, Dlt),
        Command::StartListener { name } | Command::StopListener { name } => {
            on(T::Listener, name, Ctrl)
        }
        Command::DisplayListener { selection } | Command::DisplayListenerStatus { selection } => {
            on(T::Listener, &selection.name.text(), Dsp)
        }
        Command::DefineAuthInfo { .. } => class(T::AuthInfo),
        Command::AlterAuthInfo { name, .. } => on(T::AuthInfo, name, Chg),
        Command::DeleteAuthInfo { name } => on(T::AuthInfo, name, Dlt),
        Command::DisplayAuthInfo { selection, .. } => on(T::AuthInfo, &selection.name.text(), Dsp),
        Command::DefineProcess { .. } => class(T::Process),
        Command::AlterProcess { name, .. } => on(T::Process, name, Chg),
        Command::DeleteProcess { name } => on(T::Process, name, Dlt),
        Command::DisplayProcess { selection } => on(T::Process, &selection.name.text(), Dsp),
        Command::DefineNamelist { .. } => class(T::Namelist),
        Command::AlterNamelist { name, .. } => on(T::Namelist, name, Chg),
        Command::DeleteNamelist { name } => on(T::Namelist, name, Dlt),
        Command::DisplayNamelist { selection } => on(T::Namelist, &selection.name.text(), Dsp),
        Command::DefineTopic { .. } => class(T::Topic),
        Command::AlterTopic { name, .. } => on(T::Topic, name, Chg),
        Command::DeleteTopic { name } => on(T::Topic, name, Dlt),
        Command::DisplayTopic { selection } => on(T::Topic, &selection.name.text(), Dsp),
        // Subscriptions are no OAM object type: DEFINE SUB needs CRT on the TOPIC class
        // (as DEFINE TOPIC); changing or removing one, and clearing a retained
        // publication, change the queue manager's publish/subscribe state (CHG on the
        // queue manager); the pub/sub displays need DSP on the queue manager, as DISPLAY
        // CONN. MQ checks the subscription's topic and destination besides; Ferry does
        // not yet.
        Command::DefineSubscription { .. } => class(T::Topic),
        Command::AlterSubscription { .. }
        | Command::DeleteSubscription { .. }
        | Command::ClearTopicString { .. } => on(T::Qmgr, qmgr, Chg),
        Command::DisplaySubscription { .. }
        | Command::DisplaySubscriptionStatus { .. }
        | Command::DisplayTopicStatus { .. }
        | Command::DisplayPubSub { .. } => on(T::Qmgr, qmgr, Dsp),
        Command::AlterQmgr { .. }
        | Command::SetChlauth { .. }
        | Command::SetAuthRec { .. }
        | Command::DeleteAuthRec { .. }
        | Command::RefreshSecurity(_)
        | Command::SuspendQmgr { .. }
        | Command::RefreshCluster { .. }
        | Command::ResetCluster { .. }
        | Command::ResetQmgrStatistics => on(T::Qmgr, qmgr, Chg),
        Command::DisplayQmgr { .. }
        | Command::DisplayQmgrStatus { .. }
        | Command::DisplayConnection { .. }
        | Command::DisplayChlauth { .. }
        | Command::DisplayAuthRec { .. }
        | Command::DisplayEntAuth { .. }
        | Command::DisplayClusterQmgr { .. }
        | Command::DisplayQueueCluster { .. }
        | Command::PingQmgr => on(T::Qmgr, qmgr, Dsp),
        Command::Unsupported { .. } | Command::End => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_need_mqs_authorities() {
        let need = |text: &str| {
            let cmd = crate::parse_command(text).expect("parses");
            needed(&cmd, "QM1")
                .into_iter()
                .map(|n| (n.object_type, n.name, n.authority))
                .collect::<Vec<_>>()
        };
        use Authority::*;
        use ProfileObjectType as T;
        assert_eq!(need("DEFINE QLOCAL(A)"), [(T::Queue, "@class".into(), Crt)]);
        assert_eq!(
            need("DISPLAY QLOCAL(APP.*)"),
            [(T::Queue, "APP.*".into(), Dsp)]
        );
        assert_eq!(need("CLEAR QLOCAL(A)"), [(T::Queue, "A".into(), Clr)]);
        assert_eq!(need("STOP CHANNEL(C)"), [(T::Channel, "C".into(), Ctrl)]);
        assert_eq!(
            need("SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) PRINCIPAL('x') AUTHADD(PUT)"),
            [(T::Qmgr, "QM1".into(), Chg)]
        );
        assert_eq!(need("DISPLAY QMGR"), [(T::Qmgr, "QM1".into(), Dsp)]);
        assert_eq!(
            need("DEFINE TOPIC(T) TOPICSTR('a/b')"),
            [(T::Topic, "@class".into(), Crt)]
        );
        assert_eq!(
            need("ALTER TOPIC(T) PUB(DISABLED)"),
            [(T::Topic, "T".into(), Chg)]
        );
        assert_eq!(need("DELETE TOPIC(T)"), [(T::Topic, "T".into(), Dlt)]);
        assert_eq!(
            need("DISPLAY TOPIC(PRICES.*)"),
            [(T::Topic, "PRICES.*".into(), Dsp)]
        );
        assert_eq!(
            need("DEFINE SUB(S) TOPICSTR('a') DEST(Q)"),
            [(T::Topic, "@class".into(), Crt)]
        );
        assert_eq!(need("DELETE SUB(S)"), [(T::Qmgr, "QM1".into(), Chg)]);
        assert_eq!(
            need("CLEAR TOPICSTR('a') CLRTYPE(RETAINED)"),
            [(T::Qmgr, "QM1".into(), Chg)]
        );
        assert_eq!(
            need("DISPLAY TPSTATUS('#')"),
            [(T::Qmgr, "QM1".into(), Dsp)]
        );
    }
}
