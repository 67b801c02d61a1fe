//! The group-commit writer on a real file: what it acknowledges is in the file, in order,
//! and flushes carry groups (never more than one sync per record).

use std::time::Duration;

use ferry_yardsticks::group_commit::{self, GroupCommitConfig, FILE_NAME};

#[test]
fn every_acknowledged_record_is_in_the_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let config = GroupCommitConfig {
        dir: dir.path().to_path_buf(),
        producers: 4,
        record: 2048,
        warmup: Duration::ZERO,
        secs: Duration::from_millis(100),
        file_bytes: 128 << 20,
        keep_file: true,
    };
    let result = group_commit::run(&config).unwrap();
    assert_eq!(
        result.wraps, 0,
        "the run wrapped: the file check needs a larger file"
    );
    assert!(result.records > 0 && result.syncs > 0);
    assert!(result.syncs <= result.records);
    assert!(result.max_batch as usize <= config.producers);
    let found = group_commit::durable_sequences(
        &dir.path().join(FILE_NAME),
        config.record,
        config.producers,
    )
    .unwrap();
    for (producer, (&acked, &in_file)) in result.acknowledged.iter().zip(&found).enumerate() {
        assert!(
            acked > 0,
            "producer {producer} never got a record acknowledged"
        );
        assert!(
            in_file >= acked,
            "producer {producer}: {acked} acknowledged, only {in_file} in the file"
        );
    }
    let line = result.result_line();
    assert!(line.starts_with("RESULT bench=group_commit mode=fdatasync record=2048 producers=4 "));
}

#[test]
fn the_file_is_removed_unless_kept_and_too_small_a_file_is_refused() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut config = GroupCommitConfig {
        dir: dir.path().to_path_buf(),
        producers: 2,
        record: 2048,
        warmup: Duration::ZERO,
        secs: Duration::from_millis(20),
        file_bytes: 1 << 20,
        keep_file: false,
    };
    group_commit::run(&config).unwrap();
    assert!(!dir.path().join(FILE_NAME).exists());
    config.file_bytes = 4096;
    assert!(group_commit::run(&config).is_err());
}
