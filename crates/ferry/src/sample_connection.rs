//! How the commands that are MQ sample programs (`ferry monitor` as amqsrua, `ferry
//! amqsmon` as amqsmon) reach a queue manager: over its bindings socket when it runs on
//! this host, or as a client with `--connname` (credentials from FERRY_USER and
//! FERRY_PASSWORD when both are set), as an application like any other.

use ferry_client::{ConnectOptions, Connection};
use ferry_server::home::FerryHome;
use ferry_server::lifecycle;
use std::future::Future;
use std::process::ExitCode;

/// Connects to `qmgr` as `application`: as a client of CONNAME `connname` over SVRCONN
/// `channel`, or without one over the bindings socket (refused with FRY's "not
/// running" message when it is not running).
pub async fn connect(
    home: &FerryHome,
    qmgr: &str,
    connname: Option<&str>,
    channel: &str,
    application: &str,
) -> Result<Connection, String> {
    let opts = match connname {
        Some(connname) => {
            let mut o = ConnectOptions::client(connname, channel).queue_manager(qmgr);
            if let (Ok(user), Ok(password)) =
                (std::env::var("FERRY_USER"), std::env::var("FERRY_PASSWORD"))
            {
                o = o.credentials(&user, &password);
            }
            o
        }
        None => {
            let paths = lifecycle::existing(home, qmgr).map_err(|e| e.message)?;
            if lifecycle::running_pid(&paths).is_none() {
                return Err(ferry_server::messages::QMGR_NOT_RUNNING.format(&[&qmgr]));
            }
            ConnectOptions::bindings(paths.bindings_socket()).queue_manager(qmgr)
        }
    };
    Connection::connect(&opts.application_name(application))
        .await
        .map_err(|e| format!("cannot connect to {qmgr}: {}", e.reason))
}

/// Runs `work` on a runtime of this thread; exit status 20 (MQ's samples' "failed")
/// when none can be made.
pub fn run_to_exit(work: impl Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(work),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(20)
        }
    }
}
