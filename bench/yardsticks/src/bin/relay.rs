//! `relay --addr 127.0.0.1:7070`: the request/reply relay that does no queuing
//! (`ferry_yardsticks::relay`), serving until it is killed. `relay-load --spawn-relay mio`
//! starts it by itself.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use ferry_yardsticks::relay::Relay;

/// The relay yardstick's server: forwards requests to responders and replies back.
#[derive(Parser, Debug)]
#[command(version)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7070")]
    addr: SocketAddr,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = Relay::bind(cli.addr).and_then(|mut relay| {
        eprintln!("relay listening on {}", relay.local_addr()?);
        relay.run(&AtomicBool::new(false))
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("relay: {e}");
            ExitCode::FAILURE
        }
    }
}
