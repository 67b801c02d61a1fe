//! `relay --addr 127.0.0.1:7070 [--io mio|mio-short-reads|uring]`: the request/reply relay
//! that does no queuing (`ferry_yardsticks::routing`), on epoll (`mio`, the default) or on
//! io_uring, serving until it is killed. `relay-load --spawn-relay KIND` starts it by
//! itself.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use ferry_yardsticks::relay_io::{BoundRelay, RelayIo};

/// The relay yardstick's server: forwards requests to responders and replies back.
#[derive(Parser, Debug)]
#[command(version)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7070")]
    addr: SocketAddr,
    /// Socket I/O: `mio` (epoll and recv/send, reading until WouldBlock),
    /// `mio-short-reads` (reading until a short read, as tokio does) or `uring` (io_uring).
    #[arg(long, default_value = "mio")]
    io: RelayIo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = BoundRelay::bind(cli.io, cli.addr).and_then(|mut relay| {
        eprintln!("relay ({}) listening on {}", cli.io, relay.local_addr()?);
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
