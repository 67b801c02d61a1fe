//! The running queue manager process (`ferry start QM1 --foreground`).
//!
//! Start-up: read qm.ini and the definitions (objects.json and its journal,
//! `catalogue_store`), restore the engine, recover persistent
//! messages from the recovery log (see `log_driver`), open the bindings socket
//! and the listeners with CONTROL(QMGR), publish `Running`. Then serve until a stop:
//! SIGUSR1 is a controlled stop (`ferry stop`: no new connections, wait for applications
//! to disconnect), SIGTERM or SIGINT an immediate one (`ferry stop --immediate`, Ctrl-C,
//! `docker stop`: applications are told 2162 MQRC_Q_MGR_STOPPING and their uncommitted
//! work is backed out).

mod accept;
mod admission;
mod amqp;
mod auto_config;
mod channel_auth;
mod clock;
mod command_server;
mod connauth;
mod endpoints;
mod filed_record;
#[cfg(test)]
mod import_layers;
mod log_driver;
mod log_tasks;
mod memory;
mod message_channel;
mod monitoring;
mod native;
mod queue_files;
mod reply_wait;
mod scheduling;
mod server;
mod socket_writer;
mod statistics_messages;
mod telemetry;
mod tls;
mod wake_coalescing;
mod web;

pub use memory::set_allocator_trim;

use crate::catalogue_store;
use crate::error_log::ErrorLog;
use crate::home::{FerryHome, QmgrPaths};
use crate::lifecycle::{self, ControlError, QmgrState};
use crate::messages;
use crate::qm_ini::QmIni;
use endpoints::Endpoints;
use ferry_engine::QueueManager;
use ferry_objects::listener::ListenerControl;
use ferry_objects::ListenerDefinition;
use server::Server;

use std::rc::Rc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// What `ferry create` (crtmqm) is asked for beyond the queue manager's name.
#[derive(Clone, Debug)]
pub struct CreateOptions {
    /// Port of the TCP listener started with the queue manager.
    pub port: u16,
    /// Port of the default AMQP channel (SYSTEM.DEF.AMQP).
    pub amqp_port: u16,
    /// DESCR of the queue manager.
    pub description: Option<String>,
    /// The recovery log's shape and place, fixed at creation (crtmqm -lp, -ls, -lf, -ld).
    pub log: lifecycle::LogOptions,
    /// An MQSC script or directory of scripts run at every start (crtmqm -ic; qm.ini
    /// AutoConfig/MQSCConfig).
    pub mqsc_config: Option<std::path::PathBuf>,
    /// Port of the web server (qm.ini WebServer/Port; 0: none).
    pub web_port: u16,
    /// Add the developer configuration ([`crate::developer_config`]): `ferry start
    /// --create`. Its script directory becomes MQSCConfig.
    pub developer: bool,
    /// The developer configuration's application password; `None`: FERRY_APP_PASSWORD,
    /// else a generated one that creation prints.
    pub app_password: Option<String>,
}

impl CreateOptions {
    /// MQ's defaults with these ports: no description, the default log.
    pub fn new(port: u16, amqp_port: u16) -> Self {
        CreateOptions {
            port,
            amqp_port,
            description: None,
            log: lifecycle::LogOptions::default(),
            mqsc_config: None,
            web_port: 0,
            developer: false,
            app_password: None,
        }
    }
}

/// The listener `ferry create` defines, started with the queue manager.
pub const DEFAULT_LISTENER: &str = "SYSTEM.LISTENER.TCP.1";
/// The AMQP channel every queue manager has (MQ's SYSTEM.DEF.AMQP), started with it.
pub const DEFAULT_AMQP_CHANNEL: &str = "SYSTEM.DEF.AMQP";

/// Creates queue manager `name` (crtmqm): directories, qm.ini, system objects, the
/// recovery log, a TCP listener and the default AMQP channel, both started with the queue
/// manager.
pub fn create_queue_manager(
    home: &FerryHome,
    name: &str,
    options: &CreateOptions,
) -> Result<Vec<String>, ControlError> {
    let developer_dir = options
        .developer
        .then(|| home.qmgr(name).dir.join(crate::developer_config::DIRECTORY));
    if developer_dir.is_some() && options.mqsc_config.is_some() {
        return Err(ControlError {
            message:
                "the developer configuration and --ic both name the MQSC configuration: give one"
                    .into(),
            exit_code: 71,
        });
    }
    if let Some(dir) = &developer_dir {
        // Written before the layout checks that the configuration exists; a queue manager
        // that exists already (its qm.ini) is refused first, so nothing of it is touched.
        if home.qmgr(name).exists() {
            return Err(ControlError {
                message: messages::QMGR_EXISTS.format(&[&name]),
                exit_code: 8,
            });
        }
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            std::fs::write(
                dir.join(crate::developer_config::FILE_NAME),
                crate::developer_config::MQSC,
            )
        });
        if let Err(e) = written {
            return Err(ControlError {
                message: format!("{}: {e}", dir.display()),
                exit_code: 71,
            });
        }
    }
    let mqsc_config = developer_dir.as_deref().or(options.mqsc_config.as_deref());
    let (paths, mut ini) = lifecycle::create_layout(home, name, &options.log, mqsc_config)?;
    if options.web_port != 0 {
        ini.web.port = options.web_port;
        if let Err(e) = ini.write(&paths.qm_ini()) {
            let _ = std::fs::remove_dir_all(&paths.dir);
            return Err(ControlError {
                message: e.to_string(),
                exit_code: 71,
            });
        }
    }
    let (port, amqp_port, description) = (
        options.port,
        options.amqp_port,
        options.description.as_deref(),
    );
    let now = clock::now();
    let mut engine = QueueManager::new(name, ferry_objects::QmgrAttributes::default(), now);
    let mut fx = ferry_engine::Effects::default();
    engine.define_system_objects(now);
    let mut qmgr = engine.qmgr();
    if let Some(d) = description {
        qmgr.descr = d.chars().take(64).collect();
    }
    let mut listener = ListenerDefinition::new(DEFAULT_LISTENER);
    listener.attributes.port = i32::from(port);
    listener.attributes.control = ListenerControl::QMgr;
    let amqp = engine.channel(DEFAULT_AMQP_CHANNEL).map(|mut c| {
        c.attributes.port = i32::from(amqp_port);
        c
    });
    let defined = engine
        .alter_qmgr(qmgr, &mut fx)
        .and_then(|()| engine.define_listener(listener, true, &mut fx))
        .and_then(|()| match amqp {
            Some(c) => engine.alter_channel(c, &mut fx),
            None => Ok(()),
        });
    if let Err(e) = defined {
        let _ = std::fs::remove_dir_all(&paths.dir);
        return Err(ControlError {
            message: format!("cannot define the default objects: {e}"),
            exit_code: 71,
        });
    }
    if let Err(e) = catalogue_store::create(&paths.objects(), &engine.catalogue()) {
        let _ = std::fs::remove_dir_all(&paths.dir);
        return Err(ControlError {
            message: e.to_string(),
            exit_code: 71,
        });
    }
    if let Err(e) = log_driver::create_log(&ini.log, name) {
        // The log removes what it created; the default log directory is ours to remove,
        // a LogPath given with --log-path is not.
        let _ = std::fs::remove_dir_all(&paths.dir);
        if options.log.path.is_none() {
            let _ = std::fs::remove_dir_all(&paths.log_dir);
        }
        return Err(ControlError {
            message: messages::LOG_OPEN_FAILED.format(&[&name, &e]),
            exit_code: 71,
        });
    }
    let objects = engine.queues().len()
        + engine.channels().len()
        + engine.listeners().len()
        + engine.topics().len();
    let mut lines = vec![
        messages::QMGR_CREATED.format(&[&name]),
        format!("Directory '{}' created.", paths.dir.display()),
        format!(
            "Recovery log created in '{}': {} primary and {} secondary files of {} 4 KiB pages.",
            ini.log.path, ini.log.primary_files, ini.log.secondary_files, ini.log.file_pages
        ),
        format!("Default objects for queue manager '{name}': {objects} created."),
        format!("A TCP listener on port {port} starts with the queue manager."),
        format!("The AMQP channel {DEFAULT_AMQP_CHANNEL} on port {amqp_port} starts with the queue manager."),
    ];
    if options.web_port != 0 {
        lines.push(format!(
            "The web server (health, REST API) on port {} starts with the queue manager (qm.ini WebServer).",
            options.web_port
        ));
    }
    if let Some(dir) = &developer_dir {
        match developer_user(&paths.dir, options.app_password.as_deref()) {
            Ok(generated) => {
                lines.push(format!(
                    "Developer configuration in '{}': applications connect to channel DEV.APP.SVRCONN and to {DEFAULT_AMQP_CHANNEL} with user id '{}' and its password; queues DEV.QUEUE.1-3.",
                    dir.display(),
                    crate::developer_config::APP_USER
                ));
                if let Some(password) = generated {
                    lines.push(format!(
                        "Password of '{}': {password} (set {} before creating to choose it).",
                        crate::developer_config::APP_USER,
                        crate::developer_config::APP_PASSWORD_ENV
                    ));
                }
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&paths.dir);
                return Err(ControlError {
                    message: format!("cannot add the application user: {e}"),
                    exit_code: 71,
                });
            }
        }
    }
    Ok(lines)
}

/// Puts the developer configuration's application user in the user repository of the
/// queue manager in `qm_dir`: the password given, else FERRY_APP_PASSWORD's, else a
/// generated one, returned to be printed.
fn developer_user(qm_dir: &std::path::Path, given: Option<&str>) -> Result<Option<String>, String> {
    use crate::developer_config::{APP_PASSWORD_ENV, APP_USER};
    use crate::user_repository;
    let from_env = std::env::var(APP_PASSWORD_ENV).ok();
    let (password, generated) = match given.map(str::to_string).or(from_env) {
        Some(p) if !p.is_empty() => (p, false),
        _ => (
            user_repository::generate_password().map_err(|e| e.to_string())?,
            true,
        ),
    };
    let salt = user_repository::new_salt().map_err(|e| e.to_string())?;
    let hash = ferry_security::connauth::hash_password(password.as_bytes(), &salt)
        .map_err(|e| e.to_string())?;
    let mut file = user_repository::read(qm_dir)?;
    file.set(APP_USER, hash, vec!["apps".into()])
        .map_err(|e| e.to_string())?;
    user_repository::write(qm_dir, &file).map_err(|e| e.to_string())?;
    Ok(generated.then_some(password))
}

/// Runs queue manager `name` in this process until it is stopped.
pub fn run_foreground(home: &FerryHome, name: &str) -> Result<(), ControlError> {
    let paths = lifecycle::existing(home, name)?;
    if let Some(pid) = lifecycle::running_pid(&paths) {
        if pid != std::process::id() {
            return Err(ControlError {
                message: messages::QMGR_RUNNING.format(&[&name, &pid]),
                exit_code: 5,
            });
        }
    }
    let config_error = |e: &dyn std::fmt::Display| ControlError {
        message: messages::CONFIG_ERROR.format(&[&name, e]),
        exit_code: 71,
    };
    let ini = QmIni::read(&paths.qm_ini(), &paths.log_dir).map_err(|e| config_error(&e))?;
    // Started in the background: stdout and stderr are run/console.log; keep it bounded.
    if let Err(e) = crate::console_log::adopt(&paths.console_log(), ini.error_log.console_log_size)
    {
        tracing::warn!("{}: not rotated: {e}", paths.console_log().display());
    }
    let mut error_log = ErrorLog::open(
        paths.errors_dir(),
        name,
        ini.error_log.error_log_size,
        ini.error_log.suppression_rules(ini.limits.error_log_causes),
    )
    .map_err(|e| config_error(&e))?;
    error_log.write(&messages::QMGR_STARTING, &[&name]);
    let opened = catalogue_store::open(&paths.objects()).map_err(|e| {
        error_log.write(&messages::OBJECTS_DAMAGED, &[&name, &e]);
        ControlError {
            message: messages::OBJECTS_DAMAGED.format(&[&name, &e]),
            exit_code: 71,
        }
    })?;
    for event in &opened.events {
        let _ = match event {
            catalogue_store::OpenEvent::Converted => error_log.write(
                &messages::OBJECTS_CONVERTED,
                &[&name, &opened.catalogue.queues.len()],
            ),
            catalogue_store::OpenEvent::ChlauthAdded => {
                error_log.write(&messages::CHLAUTH_ADDED, &[&name])
            }
            catalogue_store::OpenEvent::ConnauthAdded => {
                error_log.write(&messages::CONNAUTH_ADDED, &[&name])
            }
            catalogue_store::OpenEvent::TopicsAdded => {
                error_log.write(&messages::TOPICS_ADDED, &[&name])
            }
            catalogue_store::OpenEvent::TornTail { bytes, reason } => {
                error_log.write(&messages::OBJECTS_TORN, &[&name, bytes, reason])
            }
        };
    }
    let mut store = opened.state;
    let mut catalogue = opened.catalogue;
    let subscriptions = std::mem::take(&mut catalogue.subscriptions);
    let mut engine = QueueManager::from_catalogue(name, catalogue, clock::now());
    let compile = |text: &str| -> Option<Rc<dyn ferry_engine::MessageFilter>> {
        let selection = crate::amqp_mapping::JmsSelection::parse(text).ok()??;
        Some(Rc::new(selection))
    };
    for lost in engine.restore_subscriptions(subscriptions, &compile, clock::now()) {
        let why = if engine
            .subscription_statuses()
            .iter()
            .any(|s| s.name == lost.name)
        {
            "another subscription has its name".to_string()
        } else {
            format!("its selector '{}' does not compile", lost.selector)
        };
        error_log.write(
            &messages::SUBSCRIPTION_NOT_RESTORED,
            &[&lost.name, &name, &why],
        );
    }
    engine.set_buffer_sizes(ferry_engine::BufferSizes {
        non_persistent: ini.tuning.default_q_buffer_size,
        persistent: ini.tuning.default_pq_buffer_size,
    });
    let recovered = log_driver::open_and_recover(
        &ini.log,
        name,
        &paths.queues_dir(),
        &mut engine,
        clock::now(),
        &mut error_log,
    )
    .map_err(|e| {
        error_log.write(&messages::LOG_OPEN_FAILED, &[&name, &e]);
        ControlError {
            message: messages::LOG_OPEN_FAILED.format(&[&name, &e]),
            exit_code: 71,
        }
    })?;
    // Restart decoded every message of the queue files and the log: give what it freed
    // back to the system instead of leaving it in the allocator's pages.
    memory::return_free_memory();
    if recovered.catalogue_changed {
        match catalogue_store::rewrite(&store, &engine.catalogue()) {
            Ok(s) => store = s,
            Err(e) => {
                error_log.write(&messages::OBJECTS_SAVE_FAILED, &[&e]);
            }
        }
    }
    let catalogue_writer = catalogue_store::CatalogueWriter::start(store).map_err(|e| {
        error_log.write(&messages::OBJECTS_DAMAGED, &[&name, &e]);
        ControlError {
            message: messages::OBJECTS_DAMAGED.format(&[&name, &e]),
            exit_code: 71,
        }
    })?;

    std::fs::create_dir_all(paths.run_dir()).map_err(|e| config_error(&e))?;
    std::fs::write(paths.pid_file(), std::process::id().to_string())
        .map_err(|e| config_error(&e))?;
    lifecycle::forget_end(&paths);

    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all();
    let mut coalescing = None;
    if ini.tuning.wake_coalescing > 0 {
        let nap = std::time::Duration::from_micros(ini.tuning.wake_coalescing.into());
        let hooks = std::sync::Arc::new(wake_coalescing::WakeCoalescing::new(nap));
        let (park, unpark) = (hooks.clone(), hooks.clone());
        builder.on_thread_park(move || park.before_park());
        builder.on_thread_unpark(move || unpark.after_unpark());
        coalescing = Some(hooks);
    }
    let runtime = builder.build().map_err(|e| config_error(&e))?;
    let local = tokio::task::LocalSet::new();
    // The native protocol's sockets and channel instances, shared by its endpoints.
    let svrconns = Rc::new(native::Svrconns::default());
    let server = Server::new(
        paths.clone(),
        ini,
        engine,
        error_log,
        Some(recovered.log),
        catalogue_writer,
        |server| {
            // Message channel conversations arrive on the native listeners.
            let message_channels = message_channel::MessageChannels::new(server);
            svrconns.hand_channels_to(message_channels.clone());
            // Every protocol's listeners and channels: a new protocol registers here.
            Endpoints::new(
                Box::new(native::NativeListeners::new(server, svrconns.clone())),
                vec![
                    Box::new(amqp::AmqpChannels::new(server)),
                    Box::new(native::SvrconnChannels::new(svrconns.clone())),
                    Box::new(message_channels),
                ],
            )
        },
    );
    // This thread runs the runtime; the writer threads are running already and keep the
    // default policy.
    if let Some(hooks) = coalescing {
        server.scheduling.coalesce_with(hooks);
    }
    if let Err((policy, e)) = server.scheduling.start() {
        server
            .error_log
            .borrow_mut()
            .write(&messages::SCHEDULING_NOT_SET, &[&name, &policy.word(), &e]);
    }
    let result = local.block_on(&runtime, serve(server.clone(), svrconns));
    // A final checkpoint makes the next start replay little.
    if let Some(log) = server.log.as_ref() {
        log.final_checkpoint(&*server);
    }
    // Let writer tasks flush close notices before the runtime goes.
    drop(local);
    drop(runtime);
    // Every definition change submitted is written before the process ends.
    server.catalogue.finish();
    cleanup(&paths);
    // An immediate stop (or a controlled one cut short) leaves the state Ending.
    if result.is_ok() {
        let how = if server.state.get() == QmgrState::Ending {
            lifecycle::EndKind::Immediately
        } else {
            lifecycle::EndKind::Normally
        };
        lifecycle::record_end(&paths, how);
    }
    let mut error_log = server.error_log.borrow_mut();
    // The counts of repeats still being suppressed, before the last entry.
    error_log.close_all();
    error_log.write(&messages::QMGR_ENDED, &[&name]);
    drop(error_log);
    result
}

fn cleanup(paths: &QmgrPaths) {
    let _ = std::fs::remove_file(paths.bindings_socket());
    let _ = std::fs::remove_file(paths.status_file());
    let _ = std::fs::remove_file(paths.pid_file());
}

async fn serve(server: Rc<Server>, svrconns: Rc<native::Svrconns>) -> Result<(), ControlError> {
    let name = server.name.clone();
    let fail = |e: &dyn std::fmt::Display| ControlError {
        message: messages::CONFIG_ERROR.format(&[&name, e]),
        exit_code: 71,
    };
    let sock_path = server.paths.bindings_socket();
    let _ = std::fs::remove_file(&sock_path);
    let bindings = tokio::net::UnixListener::bind(&sock_path).map_err(|e| fail(&e))?;
    let bindings_task = tokio::task::spawn_local(native::accept_bindings(
        server.clone(),
        svrconns.clone(),
        bindings,
    ));

    // qm.ini AutoConfig/MQSCConfig: the administrator's scripts, before any client can
    // connect (their CHLAUTH records and channels apply to the first one).
    auto_config::apply(&server);

    // Listeners with CONTROL(QMGR) and AMQP channels start with the queue manager; one
    // that cannot is in the error log (FRY9212E/FRY9213E) and the queue manager runs on.
    let mut start_failures = server.endpoints.start_all();
    // The web server (qm.ini WebServer) with every set of routes (`web::providers`: a
    // new one, such as /metrics, registers there); one that cannot start is logged
    // (FRY9783E) and shown by `ferry start` as the listeners' failures are.
    let web_server = match web::start(&server, web::providers()) {
        Ok(w) => w,
        Err(line) => {
            start_failures.push(line);
            None
        }
    };
    *server.start_failures.borrow_mut() = start_failures;

    let mut usr1 = signal(SignalKind::user_defined1()).map_err(|e| fail(&e))?;
    let mut term = signal(SignalKind::terminate()).map_err(|e| fail(&e))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| fail(&e))?;

    // Log "started" before announcing Running: whoever waits for the announcement
    // (ferry start, tests, scripts) then finds the error log complete.
    server.error_log.borrow_mut().write(
        &messages::QMGR_STARTED,
        &[&name, &env!("CARGO_PKG_VERSION")],
    );
    // The error log echoes its entries through tracing; this one is for the console only.
    tracing::info!(
        "{}",
        messages::BINDINGS_STARTED.format(&[&sock_path.display()])
    );
    let budget = server.admission.budget();
    if budget.lowered {
        let limits = &server.ini.limits;
        server.error_log.borrow_mut().write(
            &messages::MAX_CONNECTIONS_LOWERED,
            &[
                &limits.max_connections,
                &budget.open_file_limit,
                &budget.max_connections,
                &limits.reserved_file_descriptors,
            ],
        );
    }
    server.state.set(QmgrState::Running);
    server.publish_status();

    let timer_task = tokio::task::spawn_local(expiry_timer(server.clone()));
    let durable_task = tokio::task::spawn_local(log_tasks::durable_task(server.clone()));
    let queue_files_task = tokio::task::spawn_local(log_tasks::queue_files_task(server.clone()));
    let kick_task = tokio::task::spawn_local(log_tasks::kick_task(server.clone()));
    let housekeeping_task = tokio::task::spawn_local(log_tasks::housekeeping_task(server.clone()));
    let catalogue_task = tokio::task::spawn_local(server::catalogue_task(server.clone()));
    let status_task = tokio::task::spawn_local(status_publisher(server.clone()));
    let trim_task = tokio::task::spawn_local(memory::trim_task(
        server.memory.clone(),
        server.admission.clone(),
    ));
    let suppression_task = tokio::task::spawn_local(suppression_counts(server.clone()));
    let monitor_task = tokio::task::spawn_local(monitoring::monitor_task(server.clone()));
    let statistics_task =
        tokio::task::spawn_local(statistics_messages::statistics_task(server.clone()));
    let tracing_task = server
        .telemetry
        .is_on()
        .then(|| tokio::task::spawn_local(tracing_failures(server.clone())));

    // Serve until a stop request.
    let immediate = tokio::select! {
        _ = usr1.recv() => false,
        _ = term.recv() => true,
        _ = int.recv() => true,
    };
    // AMQP clients are disconnected at once either way (MQ's AMQP service ends with the
    // queue manager); their unsettled messages go back to their queues.
    server
        .endpoints
        .stop_channels("the queue manager is stopping");
    if !immediate {
        server.state.set(QmgrState::Quiescing);
        server.with_engine(|e, now, fx| e.quiesce(now, fx));
        server.publish_status();
        let stop_now = loop {
            if server.conversations.get() == 0 {
                break false;
            }
            tokio::select! {
                _ = server.lifecycle_wake.notified() => {}
                _ = term.recv() => break true,
                _ = int.recv() => break true,
            }
        };
        if stop_now {
            end_immediately(&server, &svrconns).await;
        }
    } else {
        end_immediately(&server, &svrconns).await;
    }
    // Replies still waiting for the definitions or the log (e.g. the last MQDISC
    // commits) go out first.
    server::settle_catalogue(&server).await;
    log_tasks::settle(&server).await;
    timer_task.abort();
    status_task.abort();
    trim_task.abort();
    suppression_task.abort();
    monitor_task.abort();
    statistics_task.abort();
    if let Some(task) = tracing_task {
        task.abort();
    }
    server.telemetry.shutdown();
    durable_task.abort();
    queue_files_task.abort();
    kick_task.abort();
    housekeeping_task.abort();
    catalogue_task.abort();
    bindings_task.abort();
    drop(web_server);
    server.endpoints.listeners().stop_all();
    Ok(())
}

/// Tells every connection the queue manager is stopping, backs out their work, and
/// gives the writers a moment to deliver the news.
async fn end_immediately(server: &Rc<Server>, svrconns: &native::Svrconns) {
    server.state.set(QmgrState::Ending);
    server.publish_status();
    server.with_engine(|e, now, fx| e.stop(now, fx));
    svrconns.end_immediately(server);
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Writes FRY5591W when trace spans could not be exported since the last look, at most
/// once a minute (tracing is on; only the exporter's atomics are read).
async fn tracing_failures(server: Rc<Server>) {
    const WARNING_INTERVAL: Duration = Duration::from_secs(60);
    let mut reported = 0u64;
    let mut last_warning: Option<std::time::Instant> = None;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some((failed, error, destination)) = server.telemetry.export_failures() else {
            return;
        };
        if failed == reported || last_warning.is_some_and(|t| t.elapsed() < WARNING_INTERVAL) {
            continue;
        }
        server.error_log.borrow_mut().write(
            &messages::TRACING_EXPORT_FAILED,
            &[&server.name, &destination, &error, &(failed - reported)],
        );
        reported = failed;
        last_warning = Some(std::time::Instant::now());
    }
}

/// Completes waiting GETs whose wait interval is over and ends redelivery delays
/// (BODELAY) that are over (one timer for all of them).
async fn expiry_timer(server: Rc<Server>) {
    loop {
        let next = server.engine.borrow().next_deadline();
        server.timer_armed.set(next);
        match next {
            Some(deadline) => {
                let now = clock::now();
                let delay = Duration::from_millis(deadline.0.saturating_sub(now.0));
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {
                        server.with_engine(|e, now, fx| e.expire_waits(now, fx));
                    }
                    _ = server.timer_wake.notified() => {}
                }
            }
            None => server.timer_wake.notified().await,
        }
    }
}

/// Writes the counts of suppressed error-log messages once their interval has ended,
/// even when no further message comes to close it (checked once a second: one borrow
/// and a comparison when nothing is due).
async fn suppression_counts(server: Rc<Server>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        server.error_log.borrow_mut().close_due();
    }
}

/// Keeps run/status.json current (connection count, log counters) once a second, and only
/// when something changed: never a write per connection or per record.
async fn status_publisher(server: Rc<Server>) {
    let mut last = (u64::MAX, u64::MAX, u64::MAX, u64::MAX, u64::MAX);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let log = server
            .log
            .as_ref()
            .map(|l| l.summary())
            .map_or((0, 0), |s| (s.durable_lsn, s.checkpoint_lsn));
        let sockets = &server.admission;
        let now = (
            server.conversations.get(),
            log.0,
            log.1,
            sockets.open(),
            sockets.refused(),
        );
        if now != last {
            last = now;
            server.publish_status();
        }
    }
}
