//! Process definitions: DEFINE, ALTER and DELETE PROCESS, and SYSTEM.DEFAULT.PROCESS.
//!
//! A process is only read when a trigger message is made (`crate::trigger`): DELETE
//! PROCESS is allowed while a queue's PROCESS names it, as on MQ; that queue then makes
//! no trigger messages (unless it is a transmission queue, which needs no process).

use crate::clock::{admin_date_time, Timestamp};
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::qmgr::QueueManager;
use ferry_mqi::validate_object_name;
use ferry_objects::process::DEFAULT_PROCESS;
use ferry_objects::{AdminError, ProcessDefinition};

impl QueueManager {
    /// A process definition by exact name.
    pub fn process(&self, name: &str) -> Option<ProcessDefinition> {
        self.processes.get(name).cloned()
    }

    /// Every process definition, sorted by name.
    pub fn processes(&self) -> Vec<ProcessDefinition> {
        self.processes.values().cloned().collect()
    }

    /// DEFINE PROCESS, or with `replace` replaces the one of that name.
    pub fn define_process(
        &mut self,
        def: ProcessDefinition,
        replace: bool,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        if self.processes.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        let change = CatalogueChange::Process(def.name.clone());
        self.processes.insert(def.name.clone(), def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// ALTER PROCESS.
    pub fn alter_process(
        &mut self,
        def: ProcessDefinition,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        let old = self
            .processes
            .get_mut(&def.name)
            .ok_or_else(|| AdminError::NotFound {
                name: def.name.clone(),
            })?;
        let change = CatalogueChange::Process(def.name.clone());
        *old = def;
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// DELETE PROCESS.
    pub fn delete_process(&mut self, name: &str, fx: &mut Effects) -> Result<(), AdminError> {
        self.processes
            .remove(name)
            .ok_or_else(|| AdminError::NotFound {
                name: name.to_string(),
            })?;
        fx.push(Effect::CatalogueChanged(CatalogueChange::Process(
            name.to_string(),
        )));
        Ok(())
    }

    /// SYSTEM.DEFAULT.PROCESS where missing (stamped `now`); true when it was added.
    pub(crate) fn define_default_process(&mut self, now: Timestamp) -> bool {
        if self.processes.contains_key(DEFAULT_PROCESS) {
            return false;
        }
        let (date, time) = admin_date_time(now);
        let mut p = ProcessDefinition::new(DEFAULT_PROCESS);
        p.attributes.alteration_date = date;
        p.attributes.alteration_time = time;
        self.processes.insert(p.name.clone(), p);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::clock::Timestamp;
    use crate::effects::{CatalogueChange, Effect, Effects};
    use crate::qmgr::QueueManager;
    use ferry_objects::{AdminError, ProcessDefinition, QmgrAttributes};

    fn qm() -> QueueManager {
        let mut qm = QueueManager::new("QM1", QmgrAttributes::default(), Timestamp(1));
        qm.define_system_objects(Timestamp(1));
        qm
    }

    #[test]
    fn new_queue_managers_have_the_default_process() {
        let qm = qm();
        let p = qm.process("SYSTEM.DEFAULT.PROCESS").unwrap();
        assert_eq!(p.attributes.appl_type.keyword(), "UNIX");
        assert!(qm
            .catalogue()
            .processes
            .iter()
            .any(|p| p.name == "SYSTEM.DEFAULT.PROCESS"));
    }

    #[test]
    fn define_alter_delete() {
        let mut qm = qm();
        let mut fx = Effects::new();
        let mut p = ProcessDefinition::new("APP.PROC");
        p.attributes.appl_id = "/bin/true".into();
        qm.define_process(p.clone(), false, &mut fx).unwrap();
        assert!(fx
            .drain()
            .any(|e| matches!(e, Effect::CatalogueChanged(CatalogueChange::Process(ref n)) if n == "APP.PROC")));
        assert!(matches!(
            qm.define_process(p.clone(), false, &mut fx),
            Err(AdminError::AlreadyExists { .. })
        ));
        p.attributes.user_data = "hello".into();
        qm.alter_process(p, &mut fx).unwrap();
        assert_eq!(
            qm.process("APP.PROC").unwrap().attributes.user_data,
            "hello"
        );
        qm.delete_process("APP.PROC", &mut fx).unwrap();
        assert!(qm.process("APP.PROC").is_none());
        assert!(matches!(
            qm.delete_process("APP.PROC", &mut fx),
            Err(AdminError::NotFound { .. })
        ));
        let bad = ProcessDefinition::new("BAD NAME");
        assert!(qm.define_process(bad, false, &mut fx).is_err());
    }

    #[test]
    fn processes_survive_a_restart() {
        let mut qm = qm();
        let mut fx = Effects::new();
        qm.define_process(ProcessDefinition::new("P1"), false, &mut fx)
            .unwrap();
        let again = QueueManager::from_catalogue("QM1", qm.catalogue(), Timestamp(2));
        assert!(again.process("P1").is_some());
        assert!(again.process("SYSTEM.DEFAULT.PROCESS").is_some());
    }
}
