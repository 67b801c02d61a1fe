//! `ferry user add|remove|list QM`: the queue manager's user repository, for hosts (and
//! containers) whose users are not the applications'.
//!
//! A password comes from standard input (one line; `--password-stdin` style, for scripts
//! and secrets), from a prompt that does not echo at a terminal, or is generated and
//! printed with `--generate`. Only its Argon2id hash is kept. When the queue manager
//! runs, `REFRESH SECURITY TYPE(CONNAUTH)` is sent to it so the change applies at once.

use ferry_client::{ConnectOptions, Connection};
use ferry_security::connauth::hash_password;
use ferry_server::home::FerryHome;
use ferry_server::lifecycle::{self, ControlError};
use ferry_server::user_repository;
use std::io::{BufRead, IsTerminal};

fn error(message: String) -> ControlError {
    ControlError {
        message,
        exit_code: 20,
    }
}

/// The password for a new user: generated, prompted for, or read from stdin.
fn password(generate: bool, user: &str) -> Result<(String, bool), ControlError> {
    if generate {
        let p = user_repository::generate_password().map_err(|e| error(e.to_string()))?;
        return Ok((p, true));
    }
    let p = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(format!("Password for {user}: "))
            .map_err(|e| error(e.to_string()))?;
        let again = rpassword::prompt_password("Again: ").map_err(|e| error(e.to_string()))?;
        if first != again {
            return Err(error("the passwords differ; nothing was changed".into()));
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| error(e.to_string()))?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    Ok((p, false))
}

/// Adds (or replaces) `user` with `groups`; prints the password when it was generated.
pub fn add(
    home: &FerryHome,
    qm: &str,
    user: &str,
    groups: Vec<String>,
    generate: bool,
) -> Result<Vec<String>, ControlError> {
    let paths = lifecycle::existing(home, qm)?;
    let mut file = user_repository::read(&paths.dir).map_err(error)?;
    let (password, generated) = password(generate, user)?;
    let salt = user_repository::new_salt().map_err(|e| error(e.to_string()))?;
    let hash = hash_password(password.as_bytes(), &salt).map_err(|e| error(e.to_string()))?;
    let replaced = file.get(user).is_some();
    file.set(user, hash, groups)
        .map_err(|e| error(e.to_string()))?;
    user_repository::write(&paths.dir, &file).map_err(|e| {
        error(format!(
            "{}: {e}",
            user_repository::path(&paths.dir).display()
        ))
    })?;
    let mut lines = vec![format!(
        "User '{user}' {} in the user repository of queue manager '{qm}'.",
        if replaced { "changed" } else { "added" }
    )];
    if generated {
        lines.push(format!("Password of '{user}': {password}"));
    }
    lines.extend(refresh(home, qm));
    Ok(lines)
}

/// Removes `user`.
pub fn remove(home: &FerryHome, qm: &str, user: &str) -> Result<Vec<String>, ControlError> {
    let paths = lifecycle::existing(home, qm)?;
    let mut file = user_repository::read(&paths.dir).map_err(error)?;
    if !file.remove(user) {
        return Err(error(format!(
            "User '{user}' is not in the user repository of queue manager '{qm}'."
        )));
    }
    user_repository::write(&paths.dir, &file).map_err(|e| {
        error(format!(
            "{}: {e}",
            user_repository::path(&paths.dir).display()
        ))
    })?;
    let mut lines = vec![format!(
        "User '{user}' removed from the user repository of queue manager '{qm}'."
    )];
    lines.extend(refresh(home, qm));
    Ok(lines)
}

/// The users, one per line with their groups; never a hash.
pub fn list(home: &FerryHome, qm: &str) -> Result<Vec<String>, ControlError> {
    let paths = lifecycle::existing(home, qm)?;
    let file = user_repository::read(&paths.dir).map_err(error)?;
    Ok(file
        .users()
        .map(|(name, e)| format!("USER({name}) GROUPS({})", e.groups.join(",")))
        .collect())
}

/// REFRESH SECURITY TYPE(CONNAUTH) to a running queue manager, through its bindings
/// socket; what to tell the user.
fn refresh(home: &FerryHome, qm: &str) -> Option<String> {
    let paths = lifecycle::existing(home, qm).ok()?;
    lifecycle::running_pid(&paths)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let opts = ConnectOptions::bindings(paths.bindings_socket())
        .queue_manager(qm)
        .application_name("ferry user");
    let answer = runtime.block_on(async {
        let conn = Connection::connect(&opts).await.ok()?;
        let out = conn.mqsc("REFRESH SECURITY TYPE(CONNAUTH)").await.ok();
        let _ = conn.disconnect().await;
        out
    });
    Some(match answer {
        Some(out) if !out.failed => {
            "The running queue manager read it (REFRESH SECURITY TYPE(CONNAUTH)).".into()
        }
        _ => {
            "The running queue manager did not read it: run REFRESH SECURITY TYPE(CONNAUTH).".into()
        }
    })
}
