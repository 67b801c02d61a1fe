//! Property tests: no input panics the parser, the script reader or the executor.

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{parse_command, parse_script, run_script, RunOptions};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "DEFINE",
    "DEF",
    "ALTER",
    "DELETE",
    "DISPLAY",
    "DIS",
    "CLEAR",
    "START",
    "STOP",
    "END",
    "QLOCAL",
    "QL",
    "QALIAS",
    "QMODEL",
    "QREMOTE",
    "QUEUE",
    "Q",
    "CHANNEL",
    "CHL",
    "LISTENER",
    "LSTR",
    "QMGR",
    "QSTATUS",
    "CONN",
    "LSSTATUS",
    "(",
    ")",
    "'",
    "''",
    "*",
    "APP.*",
    "A",
    "MAXDEPTH",
    "SHARE",
    "NOSHARE",
    "DESCR",
    "WHERE",
    "CURDEPTH",
    "GT",
    "LK",
    "EQ",
    "0",
    "-1",
    "99999999999",
    "ALL",
    "TYPE",
    "HANDLE",
    "CHLTYPE",
    "SVRCONN",
    "REPLACE",
    "LIKE",
    "PURGE",
    "FORCE",
    "+",
    "-",
    "\n",
    ",",
    " ",
    "é",
    "TARGET",
    "DEFTYPE",
    "PERMDYN",
    "AMQP",
    "CHSTATUS",
    "CHS",
    "CLIENTID",
    "MODE",
    "QUIESCE",
    "PORT",
    "SSLCIPH",
    "COMPMSG",
    "(LZ4FAST,ZLIBFAST)",
    "COMPHDR",
    "SYSTEM.DEF.AMQP",
];

fn mqsc_like() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..24).prop_map(|w| w.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings_never_panic_the_parser(s in any::<String>()) {
        let _ = parse_command(&s);
        let _ = parse_script(&s);
    }

    #[test]
    fn mqsc_like_input_never_panics(s in mqsc_like()) {
        let _ = parse_command(&s);
        let mut t = MemoryTarget::with_defaults("QM1");
        let out = run_script(&s, &mut t, RunOptions::default());
        prop_assert!(out.summary.syntax_errors + out.summary.failed <= out.summary.read);
    }

    #[test]
    fn errors_point_inside_the_command(s in mqsc_like()) {
        if let Err(e) = parse_command(&s) {
            prop_assert!(e.position <= s.len());
            let _ = e.segment();
        }
    }
}
