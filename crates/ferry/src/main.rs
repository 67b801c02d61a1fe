//! `ferry`: the control commands of a Ferry installation.
//!
//! One binary with MQ's control commands as subcommands, under Ferry's names and MQ's
//! (`create`/`crtmqm`, `start`/`strmqm`, `stop`/`endmqm`, `status`/`dspmq`,
//! `delete`/`dltmqm`, `mqsc`/`runmqsc`, `trigmon`/`runmqtrm`, `monitor`/`amqsrua`,
//! `version`/`dspmqver`, and `runmqserver`, the container's entry point, and
//! MQ's own names only for
//! `setmqaut`, `dspmqaut` and `dmpmqaut`), plus `perf`, which runs
//! the performance harness: a separate `ferry-perf` executable installed beside this one,
//! so the queue manager's binary carries none of the harness's code. Every failure prints
//! a numbered FRY message and exits non-zero; every command ends quietly, as Unix tools
//! do, when its output pipe closes.

mod amqsmon;
mod authority;
mod closed_pipe;
mod container;
mod monitor;
mod mqsc;
mod open_files;
mod output;
mod perf;
mod sample_connection;
mod trigmon;
mod user;

use clap::{Parser, Subcommand};
use ferry_server::home::FerryHome;
use ferry_server::lifecycle::{self, ControlError, LogOptions, StatusView, StopMode};
use ferry_server::CreateOptions;
use std::process::ExitCode;
use std::time::Duration;

/// Ferry: an open-source queue manager in the tradition of IBM MQ.
#[derive(Parser)]
#[command(name = "ferry", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a queue manager (crtmqm): directory, qm.ini, system objects, a TCP listener.
    #[command(alias = "crtmqm")]
    Create {
        /// Queue manager name (1-48 characters: A-Z a-z 0-9 . / _ %).
        name: String,
        /// Port of the TCP listener started with the queue manager.
        #[arg(short = 'p', long, default_value_t = 1414)]
        port: u16,
        /// Port of the default AMQP channel (SYSTEM.DEF.AMQP), started with the queue manager.
        #[arg(long, default_value_t = 5672)]
        amqp_port: u16,
        /// Port of the web server (health endpoints, REST API; qm.ini WebServer/Port):
        /// 0, the default, for none; IBM's mqweb uses 9443.
        #[arg(long, default_value_t = 0)]
        web_port: u16,
        /// Description (DESCR of the queue manager).
        #[arg(short = 'c', long)]
        description: Option<String>,
        /// Primary recovery log files (qm.ini LogPrimaryFiles, crtmqm -lp): 2-510, default 3.
        #[arg(long, visible_alias = "lp", value_name = "N")]
        log_primary_files: Option<u32>,
        /// Secondary recovery log files (LogSecondaryFiles, crtmqm -ls): 1-509, default 2.
        #[arg(long, visible_alias = "ls", value_name = "N")]
        log_secondary_files: Option<u32>,
        /// Size of each log file in 4 KiB pages (LogFilePages, crtmqm -lf): 64-65535,
        /// default 4096.
        #[arg(long, visible_alias = "lf", value_name = "PAGES")]
        log_file_pages: Option<u32>,
        /// Directory of the recovery log (LogPath, crtmqm -ld); default
        /// $FERRY_HOME/log/<QM>/.
        #[arg(long, visible_alias = "ld", value_name = "DIR")]
        log_path: Option<std::path::PathBuf>,
        /// An MQSC script, or a directory of *.mqsc scripts, run at every start before
        /// clients can connect (qm.ini AutoConfig/MQSCConfig, crtmqm -ic).
        #[arg(long = "ic", value_name = "PATH")]
        mqsc_config: Option<std::path::PathBuf>,
    },
    /// Start a queue manager (strmqm); returns once it accepts connections. A listener or
    /// AMQP channel that cannot start is shown on stderr and the exit status is 10; the
    /// queue manager runs on (ALTER its PORT and START it, or stop the queue manager).
    #[command(alias = "strmqm")]
    Start {
        /// Queue manager name.
        name: String,
        /// Run in this process until stopped (containers, systemd, the README's first command).
        #[arg(long)]
        foreground: bool,
        /// Create the queue manager first if it does not exist, with the developer
        /// configuration: DEV.APP.SVRCONN and SYSTEM.DEF.AMQP open to applications as user
        /// 'app', DEV.* queues (`<qm dir>/autocfg/10-developer.mqsc`, run at every start).
        #[arg(long)]
        create: bool,
        /// Listener port when --create makes a new queue manager.
        #[arg(short = 'p', long, default_value_t = 1414, requires = "create")]
        port: u16,
        /// AMQP channel port when --create makes a new queue manager.
        #[arg(long, default_value_t = 5672, requires = "create")]
        amqp_port: u16,
        /// Web server port (health, REST API) when --create makes a new queue manager;
        /// 0 for none.
        #[arg(long, default_value_t = 9443, requires = "create")]
        web_port: u16,
    },
    /// Stop a queue manager (endmqm): controlled by default, waiting for applications.
    #[command(alias = "endmqm")]
    Stop {
        /// Queue manager name.
        name: String,
        /// End applications now, backing out their uncommitted work (endmqm -i).
        #[arg(short = 'i', long)]
        immediate: bool,
        /// Controlled stop (the default; endmqm -c).
        #[arg(short = 'c', long, conflicts_with = "immediate")]
        controlled: bool,
        /// Wait until the queue manager has ended (always true; accepted for endmqm -w).
        #[arg(short = 'w', long)]
        wait: bool,
    },
    /// Show queue managers and their state (dspmq).
    #[command(alias = "dspmq")]
    Status {
        /// Only this queue manager.
        name: Option<String>,
        /// MQ's dspmq flag for a named queue manager.
        #[arg(short = 'm')]
        m: Option<String>,
        /// What to show beside the name (dspmq -o): status (MQ's plain line), default,
        /// standby, installation, all. Without it, Ferry's line (pid, listeners, log).
        #[arg(short = 'o', value_enum)]
        output: Option<DspmqOutput>,
        /// Readiness probe (IBM's chkmqready): exit 0 when the queue manager runs, is not
        /// quiescing, and its listeners and AMQP channels accept connections on this host;
        /// 1 when not, or when it does not exist. Without a name: FERRY_QMGR_NAME,
        /// MQ_QMGR_NAME, or the only queue manager.
        #[arg(long, conflicts_with_all = ["output", "healthy"])]
        ready: bool,
        /// Liveness probe (IBM's chkmqhealthy): exit 0 when the queue manager's process
        /// runs (starting, running, quiescing or ending), 1 when it has ended, 2 when its
        /// state cannot be found out (no such queue manager).
        #[arg(long, conflicts_with = "output")]
        healthy: bool,
    },
    /// The container's entry point (IBM's runmqserver): creates the queue manager on
    /// first start (FERRY_QMGR_NAME or MQ_QMGR_NAME), merges the configuration
    /// directories' *.ini files into qm.ini and runs their *.mqsc files at every start,
    /// runs it in the foreground, and turns SIGTERM into a controlled stop.
    Runmqserver {
        /// Queue manager name (default: FERRY_QMGR_NAME, MQ_QMGR_NAME, the host name).
        #[arg(short = 'm', long = "name")]
        name: Option<String>,
        /// A directory of *.ini and *.mqsc files (repeat for several; default:
        /// FERRY_CONFIG_DIRS, colon-separated, else /etc/ferry).
        #[arg(long = "config-dir", value_name = "DIR")]
        config_dirs: Vec<std::path::PathBuf>,
        /// Listener port when the queue manager is created (FERRY_PORT).
        #[arg(short = 'p', long)]
        port: Option<u16>,
        /// AMQP channel port when the queue manager is created (FERRY_AMQP_PORT).
        #[arg(long)]
        amqp_port: Option<u16>,
        /// Web server port (health, REST) when the queue manager is created
        /// (FERRY_WEB_PORT; default 9443; 0: none).
        #[arg(long)]
        web_port: Option<u16>,
    },
    /// Delete a stopped queue manager and all its data (dltmqm).
    #[command(alias = "dltmqm")]
    Delete {
        /// Queue manager name.
        name: String,
    },
    /// The queue manager's user repository: user ids and password hashes that connection
    /// authentication (CONNAUTH, AUTHINFO IDPWOS) checks.
    User {
        /// What to do.
        #[command(subcommand)]
        action: UserAction,
    },
    /// Run MQSC commands (runmqsc): from a file, stdin, or interactively at a terminal.
    #[command(alias = "runmqsc")]
    Mqsc {
        /// Queue manager name.
        name: String,
        /// Read commands from this file instead of stdin.
        #[arg(short = 'f', long)]
        file: Option<std::path::PathBuf>,
        /// Do not echo commands (runmqsc -e).
        #[arg(short = 'e')]
        no_echo: bool,
        /// Verify syntax only; do not run anything (runmqsc -v).
        #[arg(short = 'v')]
        verify: bool,
    },
    /// Run a trigger monitor (runmqtrm): get trigger messages from an initiation queue
    /// and start the applications their processes name.
    #[command(alias = "runmqtrm")]
    Trigmon {
        /// Queue manager name.
        name: Option<String>,
        /// MQ's runmqtrm flag for the queue manager.
        #[arg(short = 'm')]
        m: Option<String>,
        /// The initiation queue (runmqtrm -q); SYSTEM.DEFAULT.INITIATION.QUEUE by default.
        #[arg(short = 'q', long = "initq", value_name = "NAME")]
        initq: Option<String>,
    },
    /// Print the statistics messages on SYSTEM.ADMIN.STATISTICS.QUEUE (MQ's amqsmon -t
    /// statistics), removing them unless -b; ends when there are no more.
    Amqsmon {
        /// Queue manager name.
        name: Option<String>,
        /// amqsmon's -m: the queue manager.
        #[arg(short = 'm')]
        m: Option<String>,
        /// amqsmon's -t: the kind of messages; only `statistics`.
        #[arg(short = 't', default_value = "statistics")]
        t: String,
        /// Browse: leave the messages on the queue.
        #[arg(short = 'b')]
        browse: bool,
        /// Wait this many seconds for a message when the queue is empty, then end.
        #[arg(short = 'w', value_name = "SECS")]
        wait: Option<u64>,
        /// Connect as a client to CONNAME, `host(port)` (user and password from
        /// FERRY_USER and FERRY_PASSWORD), rather than over the bindings socket.
        #[arg(long, value_name = "CONNAME")]
        connname: Option<String>,
        /// The SVRCONN channel for --connname.
        #[arg(long, default_value = "DEV.APP.SVRCONN")]
        channel: String,
    },
    /// Show the queue manager's resource-monitoring publications (MQ's amqsrua): without
    /// CLASS and TYPE, list the classes and types; with them, print each publication.
    #[command(alias = "amqsrua")]
    Monitor {
        /// Queue manager name.
        name: Option<String>,
        /// Class: CPU, DISK, STATMQI or STATQ.
        class: Option<String>,
        /// Type within the class (e.g. PUT, GET, QMgrSummary).
        #[arg(name = "TYPE")]
        ty: Option<String>,
        /// The queue, for STATQ.
        object: Option<String>,
        /// amqsrua's -m: the queue manager.
        #[arg(short = 'm')]
        m: Option<String>,
        /// amqsrua's -c: the class.
        #[arg(short = 'c')]
        c: Option<String>,
        /// amqsrua's -t: the type.
        #[arg(short = 't')]
        t: Option<String>,
        /// amqsrua's -o: the object (queue).
        #[arg(short = 'o')]
        o: Option<String>,
        /// Print this many publications, then end (amqsrua -n).
        #[arg(short = 'n', long = "count")]
        count: Option<u64>,
        /// Give up (exit 3) when a publication has not come within this many seconds.
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// Connect as a client to CONNAME, `host(port)` (user and password from
        /// FERRY_USER and FERRY_PASSWORD), rather than over the bindings socket.
        #[arg(long, value_name = "CONNAME")]
        connname: Option<String>,
        /// The SVRCONN channel for --connname.
        #[arg(long, default_value = "DEV.APP.SVRCONN")]
        channel: String,
    },
    /// Grant or revoke object authorities (MQ's setmqaut): -m QM -n PROFILE -t TYPE
    /// (-p USER | -g GROUP)... followed by +auth to grant and -auth to revoke (or -remove
    /// to delete the records).
    #[command(disable_help_flag = true)]
    Setmqaut {
        /// MQ's arguments, e.g. `-m QM1 -n 'APP.**' -t queue -g apps +put +get`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Show the authorities a user or group holds on an object (MQ's dspmqaut):
    /// -m QM -n NAME -t TYPE (-p USER | -g GROUP).
    #[command(disable_help_flag = true)]
    Dspmqaut {
        /// MQ's arguments, e.g. `-m QM1 -n DEV.QUEUE.1 -t queue -p app`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Dump the authority records (MQ's dmpmqaut): -m QM [-n PROFILE] [-t TYPE]
    /// [-p USER | -g GROUP] [-e exact profile] [-l profile names only].
    #[command(disable_help_flag = true)]
    Dmpmqaut {
        /// MQ's arguments, e.g. `-m QM1 -t queue`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Show the version and installation of Ferry (dspmqver).
    #[command(alias = "dspmqver")]
    Version,
    /// The performance harness: the reports' workloads against Ferry (runs the
    /// `ferry-perf` executable beside this one; `ferry perf --help` lists its commands).
    #[command(disable_help_flag = true)]
    Perf {
        /// The harness's arguments (`rr-cc --clients 1,16`...), passed on as given.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

/// `ferry user` actions.
#[derive(Subcommand)]
enum UserAction {
    /// Add a user, or change its password and groups. The password is read from stdin (one
    /// line), prompted for at a terminal, or generated and printed with --generate.
    Add {
        /// Queue manager name.
        qm: String,
        /// The user id (1-64 characters, no ':' or blanks).
        user: String,
        /// A group the user belongs to (repeat for several).
        #[arg(long = "group", short = 'g')]
        groups: Vec<String>,
        /// Generate a password and print it.
        #[arg(long)]
        generate: bool,
    },
    /// Remove a user.
    Remove {
        /// Queue manager name.
        qm: String,
        /// The user id.
        user: String,
    },
    /// List the users and their groups (never the hashes).
    List {
        /// Queue manager name.
        qm: String,
    },
}

/// dspmq -o's values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum DspmqOutput {
    /// QMNAME and STATUS only, as MQ's dspmq prints them.
    Status,
    /// DEFAULT(no): Ferry has no default queue manager.
    Default,
    /// STANDBY(Not permitted): Ferry has no standby instances.
    Standby,
    /// INSTNAME, INSTPATH, INSTVER.
    Installation,
    /// Everything above, then Ferry's fields.
    All,
}

impl From<DspmqOutput> for StatusView {
    fn from(o: DspmqOutput) -> Self {
        match o {
            DspmqOutput::Status => StatusView::Status,
            DspmqOutput::Default => StatusView::Default,
            DspmqOutput::Standby => StatusView::Standby,
            DspmqOutput::Installation => StatusView::Installation,
            DspmqOutput::All => StatusView::All,
        }
    }
}

/// mimalloc instead of glibc's malloc: the queue manager allocates and frees a few small
/// buffers per message on one thread, and the AMQP path (more, smaller allocations per
/// message than the native one) ran ~5% more round trips per second with it at 64
/// requesters; native and persistent rates were unchanged (docs/performance-history.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc keeps freed pages for a while before returning them; the queue manager asks
/// for them back at once after message bodies leave memory for the queue files.
fn return_free_memory() {
    // SAFETY: mi_collect only releases the calling thread's free memory; any thread may
    // call it at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

fn main() -> ExitCode {
    closed_pipe::end_quietly_on_closed_pipe();
    open_files::raise_limit();
    ferry_server::set_allocator_trim(return_free_memory);
    let cli = Cli::parse();
    let home = FerryHome::from_env();
    let result = match cli.command {
        Command::Create {
            name,
            port,
            amqp_port,
            web_port,
            description,
            log_primary_files,
            log_secondary_files,
            log_file_pages,
            log_path,
            mqsc_config,
        } => {
            let options = CreateOptions {
                description,
                log: LogOptions {
                    primary_files: log_primary_files,
                    secondary_files: log_secondary_files,
                    file_pages: log_file_pages,
                    path: log_path,
                },
                mqsc_config,
                web_port,
                ..CreateOptions::new(port, amqp_port)
            };
            ferry_server::create_queue_manager(&home, &name, &options).map(print_lines)
        }
        Command::Start {
            name,
            foreground,
            create,
            port,
            amqp_port,
            web_port,
        } => {
            if create && !home.qmgr(&name).exists() {
                let options = CreateOptions {
                    developer: true,
                    web_port,
                    ..CreateOptions::new(port, amqp_port)
                };
                match ferry_server::create_queue_manager(&home, &name, &options) {
                    Ok(lines) => print_lines(lines),
                    Err(e) => {
                        eprintln!("{}", e.message);
                        return ExitCode::from(u8::try_from(e.exit_code).unwrap_or(1));
                    }
                }
            }
            if foreground {
                init_tracing();
                ferry_server::run_foreground(&home, &name)
            } else {
                match lifecycle::start_background(&home, &name, Duration::from_secs(60)) {
                    Ok(report) => {
                        print_lines(report.lines);
                        if !report.warnings.is_empty() {
                            for w in &report.warnings {
                                eprintln!("{w}");
                            }
                            return ExitCode::from(lifecycle::START_INCOMPLETE_EXIT);
                        }
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
        }
        Command::Stop {
            name, immediate, ..
        } => {
            let mode = if immediate {
                StopMode::Immediate
            } else {
                StopMode::Controlled
            };
            lifecycle::stop(&home, &name, mode, |m| output::line(m)).map(output::line)
        }
        Command::Status {
            name,
            m,
            output,
            ready,
            healthy,
        } => {
            if ready || healthy {
                return probe(&home, name.or(m), ready);
            }
            status(
                &home,
                name.or(m),
                output.map_or(StatusView::Ferry, StatusView::from),
            )
        }
        Command::Runmqserver {
            name,
            config_dirs,
            port,
            amqp_port,
            web_port,
        } => {
            let env_port = |var: &str, default: u16| {
                std::env::var(var)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(default)
            };
            return container::run(
                &home,
                container::RunOptions {
                    name,
                    config_dirs,
                    port: port.unwrap_or_else(|| env_port("FERRY_PORT", 1414)),
                    amqp_port: amqp_port.unwrap_or_else(|| env_port("FERRY_AMQP_PORT", 5672)),
                    web_port: web_port.unwrap_or_else(|| env_port("FERRY_WEB_PORT", 9443)),
                },
            );
        }
        Command::Delete { name } => lifecycle::delete(&home, &name).map(output::line),
        Command::Version => {
            print_lines(ferry_server::installation::version_lines(&home));
            Ok(())
        }
        Command::Mqsc {
            name,
            file,
            no_echo,
            verify,
        } => {
            return mqsc::run(&home, &name, file.as_deref(), !no_echo, verify);
        }
        Command::Trigmon { name, m, initq } => {
            let Some(name) = name.or(m) else {
                eprintln!(
                    "ferry trigmon: name the queue manager (ferry trigmon QM1, runmqtrm -m QM1)"
                );
                return ExitCode::from(20);
            };
            let initq =
                initq.unwrap_or_else(|| ferry_objects::queue::DEFAULT_INITIATION_QUEUE.to_string());
            return trigmon::run(&home, &name, &initq);
        }
        Command::Amqsmon {
            name,
            m,
            t,
            browse,
            wait,
            connname,
            channel,
        } => {
            let Some(qmgr) = name.or(m) else {
                eprintln!("ferry amqsmon: name the queue manager (ferry amqsmon -m QM1)");
                return ExitCode::from(20);
            };
            if !t.eq_ignore_ascii_case("statistics") {
                eprintln!(
                    "ferry amqsmon: -t {t}: Ferry writes statistics messages only (-t statistics)"
                );
                return ExitCode::from(20);
            }
            let args = amqsmon::AmqsmonArgs {
                qmgr,
                browse,
                wait_secs: wait,
                connname,
                channel,
            };
            return amqsmon::run(&home, &args);
        }
        Command::Monitor {
            name,
            class,
            ty,
            object,
            m,
            c,
            t,
            o,
            count,
            timeout,
            connname,
            channel,
        } => {
            let Some(qmgr) = name.or(m) else {
                eprintln!(
                    "ferry monitor: name the queue manager (ferry monitor QM1, amqsrua -m QM1)"
                );
                return ExitCode::from(20);
            };
            let args = monitor::MonitorArgs {
                qmgr,
                class: class.or(c),
                ty: ty.or(t),
                object: object.or(o),
                count,
                timeout_secs: timeout,
                connname,
                channel,
            };
            return monitor::run(&home, &args);
        }
        Command::Perf { args } => return perf::run(&args),
        Command::Setmqaut { args } => authority::setmqaut(&home, &args).map(print_lines),
        Command::Dspmqaut { args } => authority::dspmqaut(&home, &args).map(print_lines),
        Command::Dmpmqaut { args } => authority::dmpmqaut(&home, &args).map(print_lines),
        Command::User { action } => match action {
            UserAction::Add {
                qm,
                user,
                groups,
                generate,
            } => user::add(&home, &qm, &user, groups, generate).map(print_lines),
            UserAction::Remove { qm, user } => user::remove(&home, &qm, &user).map(print_lines),
            UserAction::List { qm } => user::list(&home, &qm).map(print_lines),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.message);
            ExitCode::from(u8::try_from(e.exit_code).unwrap_or(1))
        }
    }
}

fn print_lines(lines: Vec<String>) {
    for l in lines {
        output::line(l);
    }
}

fn status(home: &FerryHome, name: Option<String>, view: StatusView) -> Result<(), ControlError> {
    let names = match name {
        Some(n) => {
            lifecycle::existing(home, &n)?;
            vec![n]
        }
        None => home.list(),
    };
    for n in names {
        output::line(lifecycle::status_view(home, &n, view));
    }
    Ok(())
}

/// `ferry status --ready` / `--healthy`: one line, and the probe's exit status.
fn probe(home: &FerryHome, name: Option<String>, ready: bool) -> ExitCode {
    let error_exit = if ready {
        lifecycle::NOT_READY_EXIT
    } else {
        lifecycle::PROBE_ERROR_EXIT
    };
    let Some(name) = name.or_else(|| container::probe_name(home)) else {
        eprintln!("ferry status: name the queue manager (or set FERRY_QMGR_NAME)");
        return ExitCode::from(error_exit);
    };
    let result = if ready {
        lifecycle::readiness(home, &name)
    } else {
        lifecycle::health(home, &name)
    };
    match result {
        Ok(r) => {
            output::line(r.line);
            ExitCode::from(if r.passed {
                lifecycle::READY_EXIT
            } else {
                lifecycle::NOT_READY_EXIT
            })
        }
        Err(e) => {
            eprintln!("{}", e.message);
            ExitCode::from(error_exit)
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FERRY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    use std::io::IsTerminal;
    // Diagnostics go to stderr, in colour only at a terminal (a background start sends
    // them to run/console.log, which the queue manager then rotates by size).
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_writer(ferry_server::console_log::writer)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
