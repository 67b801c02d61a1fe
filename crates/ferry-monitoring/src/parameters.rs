//! The PCF parameter ids (MQ's cmqcfc.h values) of the messages Ferry writes for
//! monitoring: the `$SYS` resource-monitoring publications ([`crate::publication`]) and
//! the statistics messages on SYSTEM.ADMIN.STATISTICS.QUEUE ([`crate::statistics_message`]).
//! The one table of them: nothing else spells these numbers.

/// MQCA_Q_MGR_NAME.
pub const MQCA_Q_MGR_NAME: i32 = 2015;
/// MQCA_Q_NAME.
pub const MQCA_Q_NAME: i32 = 2016;
/// MQCA_TOPIC_STRING.
pub const MQCA_TOPIC_STRING: i32 = 2094;
/// MQIAMO_MONITOR_CLASS.
pub const MQIAMO_MONITOR_CLASS: i32 = 839;
/// MQIAMO_MONITOR_TYPE.
pub const MQIAMO_MONITOR_TYPE: i32 = 840;
/// MQIAMO_MONITOR_ELEMENT.
pub const MQIAMO_MONITOR_ELEMENT: i32 = 841;
/// MQIAMO_MONITOR_DATATYPE.
pub const MQIAMO_MONITOR_DATATYPE: i32 = 842;
/// MQIAMO_MONITOR_FLAGS.
pub const MQIAMO_MONITOR_FLAGS: i32 = 843;
/// MQIAMO64_MONITOR_INTERVAL (microseconds).
pub const MQIAMO64_MONITOR_INTERVAL: i32 = 845;
/// MQCAMO_MONITOR_CLASS.
pub const MQCAMO_MONITOR_CLASS: i32 = 2713;
/// MQCAMO_MONITOR_TYPE.
pub const MQCAMO_MONITOR_TYPE: i32 = 2714;
/// MQCAMO_MONITOR_DESC.
pub const MQCAMO_MONITOR_DESC: i32 = 2715;
/// MQGACF_MONITOR_CLASS.
pub const MQGACF_MONITOR_CLASS: i32 = 8015;
/// MQGACF_MONITOR_TYPE.
pub const MQGACF_MONITOR_TYPE: i32 = 8016;
/// MQGACF_MONITOR_ELEMENT.
pub const MQGACF_MONITOR_ELEMENT: i32 = 8017;
/// MQIAMO_MONITOR_FLAGS_OBJNAME: a class whose publications are per object.
pub const MQIAMO_MONITOR_FLAGS_OBJNAME: i32 = 1;

/// MQIA_COMMAND_LEVEL.
pub const MQIA_COMMAND_LEVEL: i32 = 31;
/// MQIA_Q_TYPE.
pub const MQIA_Q_TYPE: i32 = 20;
/// MQIA_DEFINITION_TYPE.
pub const MQIA_DEFINITION_TYPE: i32 = 7;
/// MQCA_CREATION_DATE.
pub const MQCA_CREATION_DATE: i32 = 2004;
/// MQCA_CREATION_TIME.
pub const MQCA_CREATION_TIME: i32 = 2005;

/// MQCMD_STATISTICS_MQI: the MQCFH Command of an MQI statistics message.
pub const MQCMD_STATISTICS_MQI: i32 = 164;
/// MQCMD_STATISTICS_Q: the MQCFH Command of a queue statistics message.
pub const MQCMD_STATISTICS_Q: i32 = 165;
/// MQCMD_STATISTICS_CHANNEL: the MQCFH Command of a channel statistics message.
pub const MQCMD_STATISTICS_CHANNEL: i32 = 166;

/// MQCAMO_END_DATE.
pub const MQCAMO_END_DATE: i32 = 2707;
/// MQCAMO_END_TIME.
pub const MQCAMO_END_TIME: i32 = 2708;
/// MQCAMO_START_DATE.
pub const MQCAMO_START_DATE: i32 = 2711;
/// MQCAMO_START_TIME.
pub const MQCAMO_START_TIME: i32 = 2712;
/// MQGACF_Q_STATISTICS_DATA: the group of one queue's statistics.
pub const MQGACF_Q_STATISTICS_DATA: i32 = 8011;

/// MQIAMO_AVG_Q_TIME (MQIAMO64_AVG_Q_TIME: microseconds, a list of two).
pub const MQIAMO64_AVG_Q_TIME: i32 = 703;
/// MQIAMO_BACKOUTS.
pub const MQIAMO_BACKOUTS: i32 = 704;
/// MQIAMO_BROWSES.
pub const MQIAMO_BROWSES: i32 = 705;
/// MQIAMO_BROWSES_FAILED.
pub const MQIAMO_BROWSES_FAILED: i32 = 708;
/// MQIAMO_CLOSES.
pub const MQIAMO_CLOSES: i32 = 709;
/// MQIAMO_COMMITS.
pub const MQIAMO_COMMITS: i32 = 710;
/// MQIAMO_CONNS.
pub const MQIAMO_CONNS: i32 = 712;
/// MQIAMO_DISCS (a list of three: normal, implicit, queue manager).
pub const MQIAMO_DISCS: i32 = 714;
/// MQIAMO_GETS.
pub const MQIAMO_GETS: i32 = 722;
/// MQIAMO_GETS_FAILED.
pub const MQIAMO_GETS_FAILED: i32 = 725;
/// MQIAMO_INQS.
pub const MQIAMO_INQS: i32 = 727;
/// MQIAMO_OBJECT_COUNT.
pub const MQIAMO_OBJECT_COUNT: i32 = 732;
/// MQIAMO_OPENS.
pub const MQIAMO_OPENS: i32 = 733;
/// MQIAMO_PUT1S.
pub const MQIAMO_PUT1S: i32 = 734;
/// MQIAMO_PUTS.
pub const MQIAMO_PUTS: i32 = 735;
/// MQIAMO_Q_MAX_DEPTH.
pub const MQIAMO_Q_MAX_DEPTH: i32 = 739;
/// MQIAMO_Q_MIN_DEPTH.
pub const MQIAMO_Q_MIN_DEPTH: i32 = 740;
/// MQIAMO_SETS.
pub const MQIAMO_SETS: i32 = 744;
/// MQIAMO64_BROWSE_BYTES.
pub const MQIAMO64_BROWSE_BYTES: i32 = 745;
/// MQIAMO64_GET_BYTES.
pub const MQIAMO64_GET_BYTES: i32 = 747;
/// MQIAMO64_PUT_BYTES.
pub const MQIAMO64_PUT_BYTES: i32 = 748;
/// MQIAMO_CONNS_FAILED.
pub const MQIAMO_CONNS_FAILED: i32 = 749;
/// MQIAMO_OPENS_FAILED.
pub const MQIAMO_OPENS_FAILED: i32 = 751;
/// MQIAMO_INQS_FAILED.
pub const MQIAMO_INQS_FAILED: i32 = 752;
/// MQIAMO_SETS_FAILED.
pub const MQIAMO_SETS_FAILED: i32 = 753;
/// MQIAMO_PUTS_FAILED.
pub const MQIAMO_PUTS_FAILED: i32 = 754;
/// MQIAMO_PUT1S_FAILED.
pub const MQIAMO_PUT1S_FAILED: i32 = 755;
/// MQIAMO_CLOSES_FAILED.
pub const MQIAMO_CLOSES_FAILED: i32 = 757;
