//! Shared by the examples: connection settings from the environment.
//!
//! `FERRY_CONNNAME` (default `localhost(1414)`), `FERRY_CHANNEL` (default
//! `DEV.APP.SVRCONN`, the application channel of `ferry start --create`), `FERRY_QMGR`
//! (default blank: any), or `FERRY_BINDINGS` (a Unix socket path; wins over the CONNAME
//! when set). `FERRY_USER` and `FERRY_PASSWORD` give a user id and password for the queue
//! manager to check (MQCSP), as MQ's samples take MQSAMP_USER_ID.

use ferry_client::ConnectOptions;

/// Connection options from the environment, naming the application `appl`.
pub fn connect_options(appl: &str) -> ConnectOptions {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_owned());
    let opts = match std::env::var("FERRY_BINDINGS") {
        Ok(path) => ConnectOptions::bindings(path),
        Err(_) => ConnectOptions::client(
            &env("FERRY_CONNNAME", "localhost(1414)"),
            &env("FERRY_CHANNEL", "DEV.APP.SVRCONN"),
        ),
    };
    let opts = opts
        .queue_manager(&env("FERRY_QMGR", ""))
        .application_name(appl);
    match (std::env::var("FERRY_USER"), std::env::var("FERRY_PASSWORD")) {
        (Ok(user), Ok(password)) if !user.is_empty() => opts.credentials(&user, &password),
        _ => opts,
    }
}

/// The `n`th command-line argument, or `default` (the amqs samples take theirs as MQ's do).
#[allow(dead_code)]
pub fn arg(n: usize, default: &str) -> String {
    std::env::args()
        .nth(n)
        .unwrap_or_else(|| default.to_owned())
}

/// Exits with the MQ reason of a failed call.
pub fn fail(what: &str, e: ferry_mqi::MqError) -> ! {
    eprintln!("{what} failed: {e}");
    std::process::exit(1)
}
