//! The container entry point, `ferry runmqserver`, against real processes: a temporary
//! directory stands for the data volume (FERRY_HOME) and others for the mounted
//! configuration (ConfigMaps of `*.ini` and `*.mqsc` files). It creates the queue
//! manager on the first start only, merges the `.ini` files into qm.ini and runs the
//! `.mqsc` files at every start, refuses a bad `.ini` file naming its line, logs a bad
//! MQSC command with its file and line and starts anyway, turns SIGTERM into a
//! controlled stop with exit status 0; `ferry status --ready` and `--healthy` (the
//! probes, IBM's chkmqready and chkmqhealthy) answer before, during and after.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// A volume, configuration directories and ports for one queue manager.
struct Container {
    _dir: tempfile::TempDir,
    home: PathBuf,
    config: Vec<PathBuf>,
    name: String,
    port: u16,
    amqp_port: u16,
}

impl Container {
    fn new(name: &str, config_dirs: usize) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("volume");
        let config: Vec<PathBuf> = (0..config_dirs)
            .map(|i| {
                let d = dir.path().join(format!("config{i}"));
                std::fs::create_dir_all(&d).expect("config dir");
                d
            })
            .collect();
        Container {
            home,
            config,
            name: name.to_string(),
            port: free_port(),
            amqp_port: free_port(),
            _dir: dir,
        }
    }

    fn write(&self, dir: usize, file: &str, text: &str) {
        std::fs::write(self.config[dir].join(file), text).expect("config file");
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(bin());
        cmd.env("FERRY_HOME", &self.home)
            .env_remove("FERRY_APP_PASSWORD")
            .env_remove("MQ_APP_PASSWORD")
            .env_remove("FERRY_QMGR_NAME")
            .env("MQ_QMGR_NAME", &self.name)
            .env("FERRY_PORT", self.port.to_string())
            .env("FERRY_AMQP_PORT", self.amqp_port.to_string())
            // Tests run side by side: no web server on 9443.
            .env("FERRY_WEB_PORT", "0")
            .env(
                "FERRY_CONFIG_DIRS",
                self.config
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":"),
            );
        cmd
    }

    /// `ferry runmqserver` in the background, its output captured.
    fn spawn(&self, env: &[(&str, &str)]) -> Entry {
        let mut cmd = self.command();
        cmd.arg("runmqserver")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Entry(Some(cmd.spawn().expect("ferry runmqserver")))
    }

    /// `ferry runmqserver` to its end (a start that fails).
    fn run_to_end(&self) -> Output {
        self.command()
            .arg("runmqserver")
            .stdin(Stdio::null())
            .output()
            .expect("ferry runmqserver")
    }

    fn ferry(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("ferry")
    }

    /// `ferry status --ready` or `--healthy` (without a name: MQ_QMGR_NAME's), its exit
    /// status and line.
    fn probe(&self, flag: &str) -> (i32, String) {
        let out = self.ferry(&["status", flag]);
        (
            out.status.code().unwrap_or(-1),
            stdout(&out) + &stderr(&out),
        )
    }

    fn mqsc(&self, script: &str) -> String {
        let mut child = self
            .command()
            .args(["mqsc", &self.name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ferry mqsc");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(script.as_bytes())
            .expect("script");
        let out = child.wait_with_output().expect("ferry mqsc output");
        stdout(&out) + &stderr(&out)
    }

    fn wait_ready(&self, entry: &mut Entry) {
        let deadline = Instant::now() + DEADLINE;
        while self.probe("--ready").0 != 0 {
            if let Some(status) = entry.child().try_wait().expect("try_wait") {
                panic!("runmqserver ended ({status}): {}", entry.finish().1);
            }
            assert!(Instant::now() < deadline, "not ready in time");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn qm_dir(&self) -> PathBuf {
        self.home.join("qmgrs").join(&self.name)
    }
}

/// A running `ferry runmqserver`, killed if a test fails before it ends.
struct Entry(Option<Child>);

impl Entry {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("running")
    }

    fn signal(&mut self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child().id()).expect("pid");
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(pid, signal) };
    }

    /// Waits for the end: exit code and everything printed.
    fn finish(&mut self) -> (Option<i32>, String) {
        let child = self.0.take().expect("running");
        let out = child.wait_with_output().expect("wait");
        (out.status.code(), stdout(&out) + &stderr(&out))
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
            // The queue manager is told SIGTERM when its parent dies (PR_SET_PDEATHSIG).
        }
    }
}

/// Connects as `app` with `password` over TCP on DEV.APP.SVRCONN: the reason code of a
/// refusal, or `None` when connected.
fn app_connects(c: &Container, password: &str) -> Option<ferry_mqi::ReasonCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let options =
        ferry_client::ConnectOptions::client(&format!("127.0.0.1({})", c.port), "DEV.APP.SVRCONN")
            .queue_manager(&c.name)
            .credentials("app", password)
            .sharecnv(1);
    runtime.block_on(async {
        match ferry_client::Connection::connect(&options).await {
            Ok(_) => None,
            Err(e) => Some(e.reason),
        }
    })
}

fn assert_in(text: &str, wanted: &str) {
    assert!(text.contains(wanted), "{wanted:?} not in:\n{text}");
}

#[test]
fn first_start_creates_every_start_applies_and_sigterm_stops_cleanly() {
    let c = Container::new("QMCONT", 2);
    // Seed 004's shape: tuning stanzas, one known key and one Ferry does not use.
    c.write(
        0,
        "fastpath.ini",
        "Channels:\n   MQIBindType=FASTPATH\n   MaxChannels=500\nTuningParameters:\n   DefaultQBufferSize=10485760\nLog:\n   LogPrimaryFiles=4\n",
    );
    c.write(
        0,
        "20-queues.mqsc",
        "* queues\nDEFINE QLOCAL(APP.REQUEST) MAXDEPTH(5000) REPLACE\nDEFINE QLOCAL(APP.REPLY) +\n   MAXDEPTH(5000) REPLACE\n",
    );
    c.write(
        1,
        "10-disable.mqsc",
        "ALTER QMGR MAXMSGL(104857600)\nDEFINE QLOCAL(APP.SECOND.DIR) REPLACE\n",
    );
    // Before anything exists: not ready, and the state cannot be found out.
    assert_eq!(c.probe("--ready").0, 1);
    let (code, line) = c.probe("--healthy");
    assert_eq!(code, 2, "{line}");
    assert_in(&line, "FRY8118E");

    let mut entry = c.spawn(&[
        ("MQ_APP_PASSWORD", "app-secret-1"),
        ("MQ_ADMIN_PASSWORD", "admin-secret-1"),
    ]);
    c.wait_ready(&mut entry);
    let (code, line) = c.probe("--ready");
    assert_eq!(code, 0, "{line}");
    assert_in(&line, &format!("LISTENERS({})", c.port));
    assert_in(&line, &format!("AMQP({})", c.amqp_port));
    assert_eq!(c.probe("--healthy").0, 0);
    let named = c.ferry(&["status", &c.name, "--ready"]);
    assert_eq!(named.status.code(), Some(0), "{}", stdout(&named));

    // The .ini merged into qm.ini; the Log stanza shaped the new log.
    let ini = std::fs::read_to_string(c.qm_dir().join("qm.ini")).expect("qm.ini");
    assert_in(&ini, "   MaxChannels=500\n");
    assert_in(&ini, "   MQIBindType=FASTPATH\n");
    assert_in(&ini, "   DefaultQBufferSize=10485760\n");
    assert_in(&ini, "   LogPrimaryFiles=4\n");
    // Every .mqsc of both directories ran, the developer configuration too.
    let shown = c.mqsc(
        "DISPLAY QLOCAL(APP.REQUEST) MAXDEPTH\nDISPLAY QLOCAL(APP.REPLY) MAXDEPTH\nDISPLAY QLOCAL(APP.SECOND.DIR) DESCR\nDISPLAY QLOCAL(DEV.QUEUE.1) DESCR\nDISPLAY QMGR MAXMSGL\n",
    );
    assert_eq!(attrs(&shown, "MAXDEPTH"), ["5000", "5000"], "{shown}");
    assert_in(&shown, "QUEUE(APP.SECOND.DIR)");
    assert_in(&shown, "QUEUE(DEV.QUEUE.1)");
    assert_eq!(attr(&shown, "MAXMSGL").as_deref(), Some("104857600"));
    // MQ_APP_PASSWORD is app's password on the developer channel; MQ_ADMIN_PASSWORD made
    // user admin.
    assert_eq!(app_connects(&c, "app-secret-1"), None);
    assert_eq!(
        app_connects(&c, "wrong"),
        Some(ferry_mqi::ReasonCode::NotAuthorized)
    );
    let users = c.ferry(&["user", "list", &c.name]);
    assert_in(&stdout(&users), "admin");
    // Something an administrator defined by hand, to outlive the next start.
    assert_in(&c.mqsc("DEFINE QLOCAL(BY.HAND)\n"), "FRY8006I");

    // SIGTERM: a controlled stop, exit status 0; the probes then say ended.
    entry.signal(libc::SIGTERM);
    let (code, out) = entry.finish();
    assert_eq!(code, Some(0), "{out}");
    assert_in(&out, "FRY8001I"); // created
    assert_in(&out, "FRY8954I"); // fastpath.ini merged
    assert_in(&out, "FRY8955I: SIGTERM received");
    assert_in(&out, "FRY8004I");
    let (code, line) = c.probe("--ready");
    assert_eq!(code, 1, "{line}");
    let (code, line) = c.probe("--healthy");
    assert_eq!(code, 1, "{line}");
    assert_in(&line, "STATUS(Ended normally)");

    // Second start: not created again; changed files applied again.
    c.write(
        0,
        "20-queues.mqsc",
        "DEFINE QLOCAL(APP.REQUEST) MAXDEPTH(7000) REPLACE\n",
    );
    c.write(0, "fastpath.ini", "Channels:\n   MaxChannels=600\n");
    // A changed Secret: the new password holds from this start on, the old one no more.
    let mut entry = c.spawn(&[("FERRY_APP_PASSWORD", "app-secret-2")]);
    c.wait_ready(&mut entry);
    assert_eq!(app_connects(&c, "app-secret-2"), None);
    assert_eq!(
        app_connects(&c, "app-secret-1"),
        Some(ferry_mqi::ReasonCode::NotAuthorized)
    );
    let shown = c.mqsc("DISPLAY QLOCAL(APP.REQUEST) MAXDEPTH\nDISPLAY QLOCAL(BY.HAND)\n");
    assert_eq!(attr(&shown, "MAXDEPTH").as_deref(), Some("7000"), "{shown}");
    assert_in(&shown, "QUEUE(BY.HAND)");
    let ini = std::fs::read_to_string(c.qm_dir().join("qm.ini")).expect("qm.ini");
    assert_in(&ini, "   MaxChannels=600\n");
    assert_eq!(ini.matches("MaxChannels=").count(), 1, "{ini}");
    assert_eq!(ini.matches("MQSCConfig=").count(), 1, "{ini}");
    entry.signal(libc::SIGINT);
    let (code, out) = entry.finish();
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("FRY8001I"), "created again:\n{out}");
}

#[test]
fn a_bad_ini_stops_the_start_and_a_bad_mqsc_command_is_logged_with_its_line() {
    let c = Container::new("QMBAD", 1);
    c.write(
        0,
        "tuning.ini",
        "Channels:\n   MaxChannels=500\n\nLimits:\n   NoSuchLimit=3\n",
    );
    let out = c.run_to_end();
    assert_eq!(out.status.code(), Some(71), "{}", stderr(&out));
    let text = stderr(&out);
    assert_in(&text, "FRY8953E");
    assert_in(&text, "tuning.ini (line 5)");
    assert_in(&text, "NoSuchLimit");
    c.write(0, "tuning.ini", "Channels:\nMaxChannels\n");
    let out = c.run_to_end();
    assert_eq!(out.status.code(), Some(71));
    assert_in(&stderr(&out), "tuning.ini (line 2)");

    // Fixed ini; a script with a syntax error and a command that fails: the others run,
    // the queue manager starts, the error log and the console name file and line.
    c.write(0, "tuning.ini", "Channels:\n   MaxChannels=500\n");
    c.write(
        0,
        "app.mqsc",
        "DEFINE QLOCAL(GOOD.ONE) REPLACE\nDEFINE QLOCAL(BROKEN\nDELETE QLOCAL(NOT.THERE)\nDEFINE QLOCAL(GOOD.TWO) REPLACE\n",
    );
    let mut entry = c.spawn(&[]);
    c.wait_ready(&mut entry);
    let shown = c.mqsc("DISPLAY QLOCAL(GOOD.*)\n");
    assert_eq!(attrs(&shown, "QUEUE"), ["GOOD.ONE", "GOOD.TWO"], "{shown}");
    let log = std::fs::read_to_string(c.qm_dir().join("errors/FRYERR01.LOG")).expect("log");
    let script = c.config[0].join("app.mqsc");
    assert_in(&log, &format!("{}:2", script.display()));
    assert_in(&log, &format!("{}:3", script.display()));
    assert_in(&log, "2 failed");
    entry.signal(libc::SIGTERM);
    let (code, out) = entry.finish();
    assert_eq!(code, Some(0), "{out}");
    assert_in(&out, "FRY8951E");
}

#[test]
fn sigterm_waits_for_applications_then_ends_them_after_the_grace_period() {
    let c = Container::new("QMGRACE", 1);
    let mut entry = c.spawn(&[("FERRY_GRACE_PERIOD", "2")]);
    c.wait_ready(&mut entry);
    // A connected application that neither disconnects nor calls: the controlled stop
    // waits for it until the grace period has passed.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let options =
        ferry_client::ConnectOptions::bindings(c.qm_dir().join("qm.sock")).queue_manager(&c.name);
    let app = runtime
        .block_on(ferry_client::Connection::connect(&options))
        .expect("connect");
    let started = Instant::now();
    entry.signal(libc::SIGTERM);
    wait_until("quiescing", || {
        let (code, line) = c.probe("--ready");
        code == 1 && line.contains("Quiescing")
    });
    // Quiescing: not ready (no new work), still healthy (no restart).
    assert_eq!(c.probe("--healthy").0, 0);
    let (code, out) = entry.finish();
    assert_eq!(code, Some(0), "{out}");
    assert!(started.elapsed() >= Duration::from_secs(2), "{out}");
    drop(app);
}

#[test]
fn the_charts_tls_script_sets_the_key_repository() {
    // The script deploy/helm/ferry writes when tls.secretName is given, with its
    // template's values filled in and the mount point moved to a temporary directory.
    let template = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../deploy/helm/ferry/templates/configmap.yaml"),
    )
    .expect("chart template");
    let start = template.find("05-tls.mqsc: |").expect("the TLS script") + 15;
    let script: String = template[start..]
        .lines()
        .take_while(|l| !l.trim_start().starts_with("{{-"))
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    assert!(script.contains("SSLKEYR"), "{script}");
    let c = Container::new("QMTLS", 1);
    let keys = c.config[0].parent().expect("temp dir").join("tls");
    let ca = ferry_tls::self_signed::ThrowawayCa::new("Ferry Test CA").expect("ca");
    ca.issue(&keys, "ferry", &[("O", "Ferry"), ("CN", "QMTLS")], false)
        .expect("certificate");
    ca.write_trust(&keys).expect("trust.pem");
    let script = script
        .replace("{{ .Values.tls.secretName }}", "ferry-tls")
        .replace("{{ .Values.tls.label }}", "ferry")
        .replace("/etc/ferry-tls", &keys.display().to_string());
    assert!(!script.contains("{{"), "{script}");
    c.write(0, "05-tls.mqsc", &script);
    let mut entry = c.spawn(&[]);
    c.wait_ready(&mut entry);
    let shown = c.mqsc("DISPLAY QMGR SSLKEYR CERTLABL\n");
    assert_eq!(
        attr(&shown, "SSLKEYR").as_deref(),
        Some(keys.display().to_string().as_str()),
        "{shown}"
    );
    assert_eq!(attr(&shown, "CERTLABL").as_deref(), Some("ferry"));
    let log = std::fs::read_to_string(c.qm_dir().join("errors/FRYERR01.LOG")).expect("log");
    assert!(log.contains("2 commands, 0 failed"), "{log}");
    assert!(!log.contains("FRY9660E:"), "{log}");
    entry.signal(libc::SIGTERM);
    assert_eq!(entry.finish().0, Some(0));
}
