//! Snapshot and journal on real files: formats, conversion, crash rules, the writer.

use super::*;
use ferry_objects::QueueType;
use std::time::{Duration, Instant};

fn catalogue(queues: &[&str]) -> Catalogue {
    Catalogue {
        qmgr: QmgrAttributes::default(),
        queues: queues
            .iter()
            .map(|n| QueueDefinition::new(*n, QueueType::Local))
            .collect(),
        channels: Vec::new(),
        listeners: Vec::new(),
        chlauth: Default::default(),
        authinfos: Vec::new(),
        processes: Vec::new(),
        namelists: Vec::new(),
        topics: Vec::new(),
        authority_records: Default::default(),
        subscriptions: Vec::new(),
    }
}

fn names(c: &Catalogue) -> Vec<String> {
    c.queues.iter().map(|q| q.name.clone()).collect()
}

fn queue(name: &str) -> JournalRecord {
    JournalRecord::Queue(QueueDefinition::new(name, QueueType::Local))
}

/// Appends records to the journal as the writer does, with no thread.
fn append(state: &mut StoreState, records: &[JournalRecord]) {
    let mut buf = Vec::new();
    for r in records {
        journal::encode_record(state.next_seq, r, &mut buf).unwrap();
        state.next_seq += 1;
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(journal_path(&state.snapshot))
        .unwrap();
    f.write_all(&buf).unwrap();
    state.journal_len += buf.len() as u64;
}

#[test]
fn create_then_journal_records_load_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A", "B"])).unwrap();
    assert_eq!(state.generation, 1);
    append(
        &mut state,
        &[
            queue("C"),
            JournalRecord::DeleteQueue("A".into()),
            queue("A2"),
        ],
    );
    let c = load(&path).unwrap();
    assert_eq!(names(&c), ["A2", "B", "C"]);
    let opened = open(&path).unwrap();
    assert_eq!(opened.catalogue, c);
    assert!(opened.events.is_empty());
    assert_eq!(opened.state, state);
}

#[test]
fn an_old_format_file_loads_and_is_converted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    // What Ferry wrote before the journal: the catalogue alone, pretty-printed.
    let old = catalogue(&["OLD.A", "OLD.B"]);
    std::fs::write(&path, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
    assert_eq!(load(&path).unwrap(), old);
    let opened = open(&path).unwrap();
    assert_eq!(opened.catalogue, old);
    assert_eq!(opened.events, [OpenEvent::Converted]);
    assert_eq!(opened.state.generation, 1);
    // Converted: a generation in the snapshot, and an empty journal beside it.
    let text: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(text["generation"], 1);
    let j = journal::scan(&std::fs::read(journal_path(&path)).unwrap()).unwrap();
    assert_eq!((j.generation, j.records.len()), (1, 0));
    // And it opens as the new format from then on.
    let again = open(&path).unwrap();
    assert_eq!(again.catalogue, old);
    assert!(again.events.is_empty());
}

#[test]
fn a_journal_beside_an_old_format_file_is_stale() {
    // A newer Ferry converted the file, an older one then rewrote objects.json whole:
    // the journal's records are older than the snapshot, which has everything.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    append(&mut state, &[queue("GONE")]);
    std::fs::write(
        &path,
        serde_json::to_vec_pretty(&catalogue(&["A", "B"])).unwrap(),
    )
    .unwrap();
    let opened = open(&path).unwrap();
    assert_eq!(names(&opened.catalogue), ["A", "B"]);
    assert_eq!(opened.events, [OpenEvent::Converted]);
    assert!(opened.state.generation > 1, "{:?}", opened.state);
    assert_eq!(names(&load(&path).unwrap()), ["A", "B"]);
}

#[test]
fn damaged_snapshots_are_refused_never_emptied() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    create(&path, &catalogue(&["A"])).unwrap();
    let good = std::fs::read(&path).unwrap();
    for bad in [
        &good[..good.len() / 2],
        b"".as_slice(),
        b"{}".as_slice(),
        b"[]".as_slice(),
        b"null".as_slice(),
        b"{\"generation\": 1}".as_slice(),
        b"{\"queues\": []}".as_slice(),
    ] {
        std::fs::write(&path, bad).unwrap();
        let e = open(&path).err().expect("refused");
        assert!(matches!(e, CatalogueError::Format { .. }), "{e}");
        assert!(e.to_string().contains("objects.json"), "{e}");
        assert!(load(&path).is_err());
    }
}

#[test]
fn a_missing_or_newer_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let state = create(&path, &catalogue(&["A"])).unwrap();
    let jpath = journal_path(&path);
    let header = std::fs::read(&jpath).unwrap();
    std::fs::remove_file(&jpath).unwrap();
    let e = open(&path).err().expect("refused");
    assert!(
        matches!(e, CatalogueError::JournalMissing { generation: 1, .. }),
        "{e}"
    );
    std::fs::write(&jpath, journal::encode_file_header(state.generation + 1)).unwrap();
    let e = open(&path).err().expect("refused");
    assert!(matches!(e, CatalogueError::JournalAhead { .. }), "{e}");
    // A damaged journal header is refused too.
    let mut bad = header.clone();
    bad[10] ^= 0xff;
    std::fs::write(&jpath, &bad).unwrap();
    let e = open(&path).err().expect("refused");
    assert!(matches!(e, CatalogueError::Journal { .. }), "{e}");
    std::fs::write(&jpath, &header).unwrap();
    assert!(open(&path).is_ok());
}

#[test]
fn a_torn_tail_is_dropped_and_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    append(&mut state, &[queue("B"), queue("C")]);
    let complete = state.journal_len;
    // The next write was cut short by a crash: half a record.
    let mut torn = Vec::new();
    journal::encode_record(state.next_seq, &queue("D"), &mut torn).unwrap();
    torn.truncate(torn.len() / 2);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(journal_path(&path))
        .unwrap();
    f.write_all(&torn).unwrap();
    drop(f);
    assert_eq!(names(&load(&path).unwrap()), ["A", "B", "C"]);
    let opened = open(&path).unwrap();
    assert_eq!(names(&opened.catalogue), ["A", "B", "C"]);
    assert!(matches!(
        opened.events.as_slice(),
        [OpenEvent::TornTail { bytes, .. }] if *bytes == torn.len() as u64
    ));
    assert_eq!(opened.state.journal_len, complete);
    assert_eq!(
        std::fs::metadata(journal_path(&path)).unwrap().len(),
        complete
    );
    assert_eq!(opened.state.next_seq, 3);
}

#[test]
fn compaction_stopped_between_snapshot_and_journal_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    append(&mut state, &[queue("B")]);
    let old_journal = std::fs::read(journal_path(&path)).unwrap();
    let next = compact(&state, &[queue("C")]).unwrap();
    assert_eq!(next.generation, 2);
    assert_eq!(names(&load(&path).unwrap()), ["A", "B", "C"]);
    // As if the crash came after the new snapshot's rename, before the new journal's.
    std::fs::write(journal_path(&path), &old_journal).unwrap();
    let opened = open(&path).unwrap();
    assert_eq!(names(&opened.catalogue), ["A", "B", "C"]);
    assert_eq!(opened.state.generation, 2);
    // A fresh journal for generation 2 replaced the stale one.
    let j = journal::scan(&std::fs::read(journal_path(&path)).unwrap()).unwrap();
    assert_eq!((j.generation, j.records.len()), (2, 0));
}

#[test]
fn open_compacts_a_journal_that_outgrew_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    let records: Vec<JournalRecord> = (0..3000).map(|i| queue(&format!("Q{i:05}"))).collect();
    append(&mut state, &records);
    assert!(state.compaction_due(), "{state:?}");
    let opened = open(&path).unwrap();
    assert_eq!(opened.catalogue.queues.len(), 3001);
    assert_eq!(opened.state.generation, 2);
    assert_eq!(opened.state.journal_len, journal::FILE_HEADER_LEN as u64);
}

fn wait_outcome(w: &CatalogueWriter, ticket: u64) -> Outcome {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match w.outcome(ticket) {
            Outcome::Pending if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1))
            }
            o => return o,
        }
    }
}

#[test]
fn the_writer_makes_changes_durable_and_compacts_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let state = create(&path, &catalogue(&["A"])).unwrap();
    let w = CatalogueWriter::start(state).unwrap();
    let mut last = 0;
    for i in 0..4000 {
        last = w.submit(vec![queue(&format!("W{i:05}"))]);
    }
    assert_eq!(last, 4000);
    assert_eq!(wait_outcome(&w, last), Outcome::Durable);
    let t = w.submit(vec![
        JournalRecord::DeleteQueue("W00000".into()),
        JournalRecord::DeleteQueue("A".into()),
    ]);
    assert_eq!(wait_outcome(&w, t), Outcome::Durable);
    assert!(
        w.compactions() >= 1,
        "4000 records outgrow a 1-queue snapshot"
    );
    w.finish();
    let c = load(&path).unwrap();
    assert_eq!(c.queues.len(), 3999);
    assert_eq!(c.queues[0].name, "W00001");
    assert!(w.take_error().is_none());
}

#[test]
fn a_failed_write_fails_its_tickets_and_is_retried_as_a_new_snapshot() {
    // /dev/full refuses every write with ENOSPC: a disk that filled up.
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("skipped: no /dev/full here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let state = create(&path, &catalogue(&["A"])).unwrap();
    let jpath = journal_path(&path);
    let empty_journal = std::fs::read(&jpath).unwrap();
    std::fs::remove_file(&jpath).unwrap();
    std::os::unix::fs::symlink(full, &jpath).unwrap();
    let w = CatalogueWriter::start(state).unwrap();
    let t = w.submit(vec![queue("B")]);
    assert_eq!(wait_outcome(&w, t), Outcome::Failed);
    let why = w.take_error().expect("the failure is reported");
    assert!(why.contains("objects.journal"), "{why}");
    // Space again: the retry writes a whole new generation with the change.
    std::fs::remove_file(&jpath).unwrap();
    std::fs::write(&jpath, &empty_journal).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while w.outcome(t) != Outcome::Durable {
        assert!(Instant::now() < deadline, "never retried");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(w.compactions(), 1);
    let t = w.submit(vec![queue("C")]);
    assert_eq!(wait_outcome(&w, t), Outcome::Durable);
    w.finish();
    assert_eq!(names(&load(&path).unwrap()), ["A", "B", "C"]);
}

#[test]
fn chlauth_records_are_journalled_per_profile() {
    use ferry_security::chlauth::{ChlauthRecord, ChlauthRules, ChlauthType, SetAction};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    let mut rules = ChlauthRules::default();
    let mut r = ChlauthRecord::new("APP.*", ChlauthType::BlockUser);
    r.user_list = vec!["eve".into()];
    rules.set(r, SetAction::Add).unwrap();
    append(
        &mut state,
        &[JournalRecord::Chlauth {
            profile: "APP.*".into(),
            records: rules.profile("APP.*"),
        }],
    );
    let c = load(&path).unwrap();
    assert_eq!(c.chlauth, rules);
    // The profile's records removed: an empty set for it.
    append(
        &mut state,
        &[JournalRecord::Chlauth {
            profile: "APP.*".into(),
            records: ChlauthRules::default(),
        }],
    );
    assert!(load(&path).unwrap().chlauth.is_empty());
}

#[test]
fn authority_records_are_journalled_one_by_one_and_survive_compaction() {
    use ferry_security::oam::{
        Authorities, Authority, AuthorityRecords, EntityType, Profile, ProfileObjectType,
        RecordKey, SavedAuthorityRecord,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    let mut records = AuthorityRecords::default();
    let key = RecordKey::new(
        ProfileObjectType::Queue,
        Profile::parse("APP.**").unwrap(),
        EntityType::Group,
        "apps",
    )
    .unwrap();
    records.set(
        key.clone(),
        Authorities::of(&[Authority::Put, Authority::Get]),
        Authorities::NONE,
    );
    append(
        &mut state,
        &[JournalRecord::AuthorityRecord(SavedAuthorityRecord::of(
            &records, &key,
        ))],
    );
    assert_eq!(load(&path).unwrap().authority_records, records);
    // A snapshot (as compaction writes) holds them too.
    let c = load(&path).unwrap();
    let again = dir.path().join("again.json");
    create(&again, &c).unwrap();
    assert_eq!(load(&again).unwrap().authority_records, records);
    records.delete(&key).unwrap();
    append(
        &mut state,
        &[JournalRecord::AuthorityRecord(SavedAuthorityRecord::of(
            &records, &key,
        ))],
    );
    assert!(load(&path).unwrap().authority_records.is_empty());
}

#[test]
fn a_catalogue_from_before_authority_records_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    create(&path, &catalogue(&["A"])).unwrap();
    let mut text: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    text.as_object_mut()
        .unwrap()
        .remove("authority_records")
        .unwrap();
    std::fs::write(&path, serde_json::to_vec(&text).unwrap()).unwrap();
    let opened = open(&path).unwrap();
    assert!(opened.events.is_empty(), "{:?}", opened.events);
    assert!(opened.catalogue.authority_records.is_empty());
}

#[test]
fn a_catalogue_from_before_chlauth_gets_the_default_records_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    create(&path, &catalogue(&["A"])).unwrap();
    let mut text: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    text.as_object_mut().unwrap().remove("chlauth").unwrap();
    std::fs::write(&path, serde_json::to_vec(&text).unwrap()).unwrap();
    let opened = open(&path).unwrap();
    assert_eq!(opened.events, [OpenEvent::ChlauthAdded]);
    assert_eq!(opened.catalogue.chlauth.len(), 3);
    assert_eq!(
        opened.catalogue.qmgr.channel_auth,
        ferry_objects::queue::Enablement::Disabled
    );
}

#[test]
fn a_damaged_chlauth_record_is_refused_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    create(&path, &catalogue(&["A"])).unwrap();
    let mut text: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    text["chlauth"] =
        serde_json::json!([{"profile": "APP", "kind": "BLOCKADDR", "address_list": ["10.*"]}]);
    std::fs::write(&path, serde_json::to_vec(&text).unwrap()).unwrap();
    let e = open(&path).err().expect("refused");
    assert!(e.to_string().contains("its profile must be '*'"), "{e}");
}

#[test]
fn topic_records_define_alter_and_delete() {
    use ferry_objects::topic::TopicEnablement;
    use ferry_objects::TopicDefinition;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    let mut prices = TopicDefinition::new("PRICES", "Prices");
    append(
        &mut state,
        &[
            JournalRecord::Topic(prices.clone()),
            JournalRecord::Topic(TopicDefinition::new("GONE", "Gone")),
        ],
    );
    prices.attributes.publish = TopicEnablement::Disabled;
    append(
        &mut state,
        &[
            JournalRecord::Topic(prices.clone()),
            JournalRecord::DeleteTopic("GONE".into()),
        ],
    );
    let opened = open(&path).unwrap();
    assert!(opened.events.is_empty(), "{:?}", opened.events);
    assert_eq!(opened.catalogue.topics, [prices]);
}

#[test]
fn process_records_define_alter_and_delete_and_old_catalogues_have_none() {
    use ferry_objects::ProcessDefinition;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    let mut serve = ProcessDefinition::new("SERVE");
    append(
        &mut state,
        &[
            JournalRecord::Process(serve.clone()),
            JournalRecord::Process(ProcessDefinition::new("GONE")),
        ],
    );
    serve.attributes.appl_id = "/opt/serve".into();
    append(
        &mut state,
        &[
            JournalRecord::Process(serve.clone()),
            JournalRecord::DeleteProcess("GONE".into()),
        ],
    );
    let opened = open(&path).unwrap();
    assert_eq!(opened.catalogue.processes, [serve]);

    // A snapshot written before process definitions reads as having none (the engine
    // adds SYSTEM.DEFAULT.PROCESS at start).
    let old = dir.path().join("old.json");
    create(&old, &catalogue(&["A"])).unwrap();
    let mut text: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&old).unwrap()).unwrap();
    text.as_object_mut().unwrap().remove("processes");
    std::fs::write(&old, serde_json::to_vec(&text).unwrap()).unwrap();
    assert!(open(&old).unwrap().catalogue.processes.is_empty());
}

#[test]
fn durable_subscription_records_survive_reopening_and_old_catalogues_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    let mut state = create(&path, &catalogue(&["A"])).unwrap();
    let sub = |name: &str| ferry_objects::DurableSubscription {
        name: name.into(),
        id: [7; 24],
        topic_string: "Prices/#".into(),
        character_wildcards: false,
        destination: "A".into(),
        managed: false,
        selector: "Venue = 'LSE'".into(),
        user_data: "desk=fx".into(),
        correl_id: None,
        pub_priority: -3,
        sub_level: 1,
        on_request: false,
        any_user: false,
        user_id: "app".into(),
        administrative: false,
        created_ms: 1,
        shared: false,
        no_local: false,
        details: Default::default(),
    };
    append(
        &mut state,
        &[
            JournalRecord::Subscription(sub("KEPT")),
            JournalRecord::Subscription(sub("GONE")),
            JournalRecord::DeleteSubscription("GONE".into()),
        ],
    );
    let opened = open(&path).unwrap();
    assert_eq!(opened.catalogue.subscriptions, [sub("KEPT")]);
    // A snapshot written before subscriptions existed reads as none.
    let mut text: serde_json::Value = serde_json::to_value(SnapshotOut {
        generation: 1,
        catalogue: &catalogue(&["A"]),
    })
    .unwrap();
    text.as_object_mut()
        .unwrap()
        .remove("subscriptions")
        .unwrap();
    let old: SnapshotIn = serde_json::from_value(text).unwrap();
    assert!(old.subscriptions.is_empty());
}

#[test]
fn a_catalogue_from_before_topics_gets_the_shipped_topics_and_model_queues() {
    use ferry_objects::topic::{
        DURABLE_MODEL_QUEUE, NON_DURABLE_MODEL_QUEUE, SYSTEM_BASE_TOPIC, SYSTEM_DEFAULT_TOPIC,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    create(&path, &catalogue(&["A"])).unwrap();
    let mut text: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    text.as_object_mut().unwrap().remove("topics").unwrap();
    std::fs::write(&path, serde_json::to_vec(&text).unwrap()).unwrap();
    let opened = open(&path).unwrap();
    assert_eq!(opened.events, [OpenEvent::TopicsAdded]);
    let topics: Vec<_> = opened.catalogue.topics.iter().map(|t| &t.name).collect();
    assert_eq!(topics, [SYSTEM_BASE_TOPIC, SYSTEM_DEFAULT_TOPIC]);
    assert_eq!(
        names(&opened.catalogue),
        ["A", DURABLE_MODEL_QUEUE, NON_DURABLE_MODEL_QUEUE]
    );
    // Once: the next start finds them saved, and a deleted SYSTEM.BASE.TOPIC stays deleted.
    let mut state = opened.state;
    append(
        &mut state,
        &[JournalRecord::DeleteTopic(SYSTEM_BASE_TOPIC.into())],
    );
    let again = open(&path).unwrap();
    assert!(again.events.is_empty(), "{:?}", again.events);
    let topics: Vec<_> = again.catalogue.topics.iter().map(|t| &t.name).collect();
    assert_eq!(topics, [SYSTEM_DEFAULT_TOPIC]);
}
