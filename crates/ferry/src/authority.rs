//! `ferry setmqaut`, `dspmqaut` and `dmpmqaut` (and those names): MQ's control commands
//! for object authorities, with MQ's arguments (`-m QM -n 'APP.**' -t queue -g apps +put
//! -get`), run as SET/DELETE AUTHREC, DISPLAY ENTAUTH and DISPLAY AUTHREC against the
//! running queue manager over its bindings socket (so its checks and messages apply).
//!
//! The arguments are parsed here rather than by clap: MQ's `-put` revokes an authority,
//! which an option parser would take for `-p ut`.

use ferry_client::{ConnectOptions, Connection};
use ferry_messages as messages;
use ferry_security::oam::{Authority, AuthorityName, ProfileObjectType};
use ferry_server::home::FerryHome;
use ferry_server::lifecycle::{self, ControlError};

/// Exit status for arguments that do not parse (MQ's "syntax error").
const EXIT_SYNTAX: i32 = 36;
/// Exit status when the queue manager refused the change.
const EXIT_FAILED: i32 = 20;

fn syntax(text: impl Into<String>) -> ControlError {
    ControlError {
        message: text.into(),
        exit_code: EXIT_SYNTAX,
    }
}

/// Arguments common to the three commands.
#[derive(Default, Debug)]
struct Args {
    qmgr: Option<String>,
    name: Option<String>,
    object_type: Option<ProfileObjectType>,
    principals: Vec<String>,
    groups: Vec<String>,
    add: Vec<String>,
    remove: Vec<String>,
    remove_records: bool,
    names_only: bool,
    exact: bool,
}

fn parse(command: &str, raw: &[String]) -> Result<Args, ControlError> {
    let mut a = Args::default();
    let mut it = raw.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| syntax(format!("{command}: {flag} needs a value")))
        };
        match arg.as_str() {
            "-m" => a.qmgr = Some(value("-m")?),
            "-n" => a.name = Some(value("-n")?),
            "-t" => {
                let t = value("-t")?;
                a.object_type = Some(ProfileObjectType::from_flag(&t).ok_or_else(|| {
                    let types: Vec<&str> =
                        ProfileObjectType::ALL.iter().map(|r| r.flags[0]).collect();
                    syntax(format!(
                        "{command}: -t {t} is not an object type; use one of {}",
                        types.join(", ")
                    ))
                })?)
            }
            "-p" => a.principals.push(value("-p")?),
            "-g" => a.groups.push(value("-g")?),
            // One authorization service, the OAM: accepted and ignored.
            "-s" => {
                value("-s")?;
            }
            "-remove" => a.remove_records = true,
            "-l" => a.names_only = true,
            "-e" => a.exact = true,
            s if s.len() > 1 && (s.starts_with('+') || s.starts_with('-')) => {
                let name = &s[1..];
                if AuthorityName::parse(name).is_none() {
                    return Err(syntax(format!(
                        "{command}: {s} is neither an option nor an authority (+put, -get, +all...)"
                    )));
                }
                if s.starts_with('+') {
                    a.add.push(name.to_ascii_uppercase());
                } else {
                    a.remove.push(name.to_ascii_uppercase());
                }
            }
            other => return Err(syntax(format!("{command}: unexpected argument '{other}'"))),
        }
    }
    Ok(a)
}

fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The queue manager named by -m, and the MQSC PROFILE/OBJTYPE clause.
fn target(command: &str, a: &Args) -> Result<(String, ProfileObjectType), ControlError> {
    let qmgr = a
        .qmgr
        .clone()
        .ok_or_else(|| syntax(format!("{command}: -m names the queue manager")))?;
    let object_type = a
        .object_type
        .ok_or_else(|| syntax(format!("{command}: -t names the object type")))?;
    Ok((qmgr, object_type))
}

fn entities(a: &Args) -> Vec<(&'static str, &String)> {
    a.principals
        .iter()
        .map(|p| ("PRINCIPAL", p))
        .chain(a.groups.iter().map(|g| ("GROUP", g)))
        .collect()
}

/// Runs `commands` on queue manager `qm`; the output lines of each, or the first refusal.
fn run_mqsc(
    home: &FerryHome,
    qm: &str,
    commands: &[String],
) -> Result<Vec<Vec<String>>, ControlError> {
    let paths = lifecycle::existing(home, qm)?;
    if lifecycle::running_pid(&paths).is_none() {
        return Err(ControlError {
            message: messages::QMGR_NOT_RUNNING.format(&[&qm]),
            exit_code: 16,
        });
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ControlError {
            message: e.to_string(),
            exit_code: EXIT_FAILED,
        })?;
    runtime.block_on(async {
        let opts = ConnectOptions::bindings(paths.bindings_socket())
            .queue_manager(qm)
            .application_name("ferry setmqaut");
        let conn = Connection::connect(&opts).await.map_err(|e| ControlError {
            message: messages::QMGR_NOT_RUNNING.format(&[&format!("{qm} ({e})")]),
            exit_code: 16,
        })?;
        let mut outputs = Vec::new();
        for c in commands {
            let out = conn.mqsc(c).await.map_err(|e| ControlError {
                message: e.to_string(),
                exit_code: EXIT_FAILED,
            })?;
            if out.failed {
                return Err(ControlError {
                    message: out.lines.join("\n"),
                    exit_code: EXIT_FAILED,
                });
            }
            outputs.push(out.lines);
        }
        let _ = conn.disconnect().await;
        Ok(outputs)
    })
}

/// `setmqaut`: grants (+auth) and revokes (-auth) authorities of each principal and group
/// named, or removes their records (-remove).
pub fn setmqaut(home: &FerryHome, raw: &[String]) -> Result<Vec<String>, ControlError> {
    if let Some(text) = help("setmqaut", raw) {
        return Ok(text);
    }
    let a = parse("setmqaut", raw)?;
    let (qm, object_type) = target("setmqaut", &a)?;
    let who = entities(&a);
    if who.is_empty() {
        return Err(syntax(
            "setmqaut: name at least one principal (-p) or group (-g)",
        ));
    }
    let profile = match (object_type, &a.name) {
        (ProfileObjectType::Qmgr, _) => String::new(),
        (_, Some(n)) => format!(" PROFILE({})", quoted(n)),
        (_, None) => return Err(syntax("setmqaut: -n names the object or profile")),
    };
    if !a.remove_records && a.add.is_empty() && a.remove.is_empty() {
        return Err(syntax(
            "setmqaut: give authorities to grant (+put) or revoke (-put), or -remove",
        ));
    }
    let commands: Vec<String> = who
        .iter()
        .map(|(kind, name)| {
            let head = format!("OBJTYPE({object_type}){profile} {kind}({})", quoted(name));
            if a.remove_records {
                return format!("DELETE AUTHREC {head}");
            }
            let list = |l: &[String]| l.join(",");
            let mut c = format!("SET AUTHREC {head}");
            if !a.add.is_empty() {
                c.push_str(&format!(" AUTHADD({})", list(&a.add)));
            }
            if !a.remove.is_empty() {
                c.push_str(&format!(" AUTHRMV({})", list(&a.remove)));
            }
            c
        })
        .collect();
    run_mqsc(home, &qm, &commands)?;
    Ok(vec!["The setmqaut command completed successfully.".into()])
}

/// The value of cell `keyword` in DISPLAY output lines (`KEYWORD(value)`).
fn cell<'l>(lines: &'l [String], keyword: &str) -> Option<&'l str> {
    let open = format!("{keyword}(");
    lines.iter().find_map(|l| {
        let at = l.find(&open)?;
        // A cell starts a line's column: what precedes it is blank.
        if at > 0 && !l[..at].ends_with(' ') {
            return None;
        }
        let rest = &l[at + open.len()..];
        rest.find(')').map(|end| rest[..end].trim())
    })
}

fn lower_authorities(list: &str) -> Vec<String> {
    list.split(',')
        .filter(|a| !a.is_empty() && *a != "NONE")
        .map(str::to_ascii_lowercase)
        .collect()
}

/// `dspmqaut`: the authorities one principal or group holds on one object.
pub fn dspmqaut(home: &FerryHome, raw: &[String]) -> Result<Vec<String>, ControlError> {
    if let Some(text) = help("dspmqaut", raw) {
        return Ok(text);
    }
    let a = parse("dspmqaut", raw)?;
    let (qm, object_type) = target("dspmqaut", &a)?;
    let who = entities(&a);
    let [(kind, entity)] = who.as_slice() else {
        return Err(syntax(
            "dspmqaut: name one principal (-p) or one group (-g)",
        ));
    };
    let name = match (object_type, &a.name) {
        (ProfileObjectType::Qmgr, n) => n.clone().unwrap_or_else(|| qm.clone()),
        (_, Some(n)) => n.clone(),
        (_, None) => return Err(syntax("dspmqaut: -n names the object")),
    };
    let command = format!(
        "DISPLAY ENTAUTH {kind}({}) OBJNAME({}) OBJTYPE({object_type}) ALL",
        quoted(entity),
        quoted(&name)
    );
    let out = run_mqsc(home, &qm, &[command])?;
    let lines = out.into_iter().next().unwrap_or_default();
    let held = lower_authorities(cell(&lines, "AUTHLIST").unwrap_or(""));
    let mut text = vec![format!(
        "Entity {entity} has the following authorizations for object {name}:"
    )];
    text.extend(held.into_iter().map(|a| format!("\t{a}")));
    Ok(text)
}

/// `dmpmqaut`: the authority records, as MQ's dmpmqaut prints them.
pub fn dmpmqaut(home: &FerryHome, raw: &[String]) -> Result<Vec<String>, ControlError> {
    if let Some(text) = help("dmpmqaut", raw) {
        return Ok(text);
    }
    let a = parse("dmpmqaut", raw)?;
    let qm = a
        .qmgr
        .clone()
        .ok_or_else(|| syntax("dmpmqaut: -m names the queue manager"))?;
    let mut command = "DISPLAY AUTHREC".to_string();
    if let Some(n) = &a.name {
        command.push_str(&format!(" PROFILE({})", quoted(n)));
    }
    if let Some(t) = a.object_type {
        command.push_str(&format!(" OBJTYPE({t})"));
    }
    match entities(&a).as_slice() {
        [] => {}
        [(kind, name)] => command.push_str(&format!(" {kind}({})", quoted(name))),
        _ => {
            return Err(syntax(
                "dmpmqaut: name at most one principal (-p) or group (-g)",
            ))
        }
    }
    if a.exact {
        command.push_str(" MATCH(EXACT)");
    }
    let out = match run_mqsc(home, &qm, &[command]) {
        Ok(out) => out,
        // No record matches: nothing to dump, as dmpmqaut prints nothing.
        Err(e) if e.message.starts_with("FRY8865E") => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let lines = out.into_iter().next().unwrap_or_default();
    let mut text = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for block in lines.split(|l| l.starts_with("FRY8864I")).skip(1) {
        let get = |k| cell(block, k).unwrap_or("");
        let object_type = ProfileObjectType::from_mqsc(get("OBJTYPE"))
            .map_or(get("OBJTYPE").to_ascii_lowercase(), |t| {
                t.flag().to_string()
            });
        if a.names_only {
            if seen.insert((get("PROFILE").to_string(), object_type.clone())) {
                text.push(format!(
                    "profile:     {}, type: {object_type}",
                    get("PROFILE")
                ));
            }
            continue;
        }
        text.push(format!("profile:     {}", get("PROFILE")));
        text.push(format!("object type: {object_type}"));
        text.push(format!("entity:      {}", get("ENTITY")));
        text.push(format!(
            "entity type: {}",
            get("ENTTYPE").to_ascii_lowercase()
        ));
        text.push(format!(
            "authority:   {}",
            lower_authorities(get("AUTHLIST")).join(" ")
        ));
        text.push("- - - - - - - - - ".to_string());
    }
    Ok(text)
}

/// The usage text of `command`, when its arguments ask for help.
fn help(command: &str, raw: &[String]) -> Option<Vec<String>> {
    if !raw
        .iter()
        .any(|a| matches!(a.as_str(), "--help" | "-h" | "-?"))
    {
        return None;
    }
    let usage = match command {
        "setmqaut" => "setmqaut -m QM [-n PROFILE] -t TYPE (-p USER | -g GROUP)... (+AUTH | -AUTH)... | -remove",
        "dspmqaut" => "dspmqaut -m QM [-n NAME] -t TYPE (-p USER | -g GROUP)",
        _ => "dmpmqaut -m QM [-n PROFILE] [-t TYPE] [-p USER | -g GROUP] [-e] [-l]",
    };
    let types: Vec<&str> = ProfileObjectType::ALL.iter().map(|r| r.flags[0]).collect();
    let mut names: Vec<&str> = Authority::ALL.iter().map(|r| r.flag).collect();
    names.extend(["alladm", "allmqi", "all", "none"]);
    Some(vec![
        format!("Usage: {usage}"),
        format!("Types: {}", types.join(" ")),
        format!("Authorities: {}", names.join(" ")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn mq_arguments_parse_with_revocations_apart_from_options() {
        let a = parse(
            "setmqaut",
            &args("-m QM1 -n APP.** -t q -g apps +put +browse -get -p bob"),
        )
        .unwrap();
        assert_eq!(a.qmgr.as_deref(), Some("QM1"));
        assert_eq!(a.object_type, Some(ProfileObjectType::Queue));
        assert_eq!(a.add, ["PUT", "BROWSE"]);
        assert_eq!(a.remove, ["GET"]);
        assert_eq!(a.groups, ["apps"]);
        assert_eq!(a.principals, ["bob"]);
        assert!(parse("setmqaut", &args("-m QM1 +nosuch")).is_err());
        assert!(parse("setmqaut", &args("-m QM1 -t nosuch")).is_err());
    }

    #[test]
    fn cells_are_read_from_display_output() {
        let lines = vec![
            "   PROFILE(APP.**)                         ENTITY(app)".to_string(),
            "   AUTHLIST(BROWSE,GET)".to_string(),
        ];
        assert_eq!(cell(&lines, "PROFILE"), Some("APP.**"));
        assert_eq!(cell(&lines, "ENTITY"), Some("app"));
        assert_eq!(
            lower_authorities(cell(&lines, "AUTHLIST").unwrap()),
            ["browse", "get"]
        );
    }
}
