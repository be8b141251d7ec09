//! What the server spent on a run (`INFO commandstats`, `INFO cpu`) and what a run left on
//! it (`MEMORY USAGE` of every key).

use std::collections::{BTreeMap, BTreeSet};

use redis::aio::MultiplexedConnection;

use crate::server::{field_value, info};

/// The server's counters at one instant.
pub(crate) struct Snapshot {
    /// Calls and microseconds by command (`cmdstat_xadd` is `xadd`, subcommands as
    /// `config|set`).
    commands: BTreeMap<String, (u64, u64)>,
    /// The main thread's user + system CPU time, in µs.
    cpu_main_us: f64,
}

impl Snapshot {
    pub(crate) async fn take(con: &mut MultiplexedConnection) -> Result<Snapshot, String> {
        let stats = info(con, "commandstats").await?;
        let cpu = info(con, "cpu").await?;
        let commands = stats
            .lines()
            .filter_map(|line| {
                let (name, fields) = line.strip_prefix("cmdstat_")?.split_once(':')?;
                let number = |key: &str| -> Option<u64> {
                    fields
                        .split(',')
                        .find_map(|field| field.strip_prefix(key)?.strip_prefix('='))?
                        .parse()
                        .ok()
                };
                Some((name.to_string(), (number("calls")?, number("usec")?)))
            })
            .collect();
        let seconds = |field: &str| -> Result<f64, String> {
            field_value(&cpu, field)
                .and_then(|value| value.parse::<f64>().ok())
                .ok_or_else(|| format!("INFO cpu has no {field}"))
        };
        let cpu_main_us =
            (seconds("used_cpu_user_main_thread")? + seconds("used_cpu_sys_main_thread")?) * 1e6;
        Ok(Snapshot {
            commands,
            cpu_main_us,
        })
    }

    /// What happened between `self` and `later`, with `nested` (the commands the system's
    /// scripts run) told apart from the commands sent to the server.
    pub(crate) fn until(&self, later: &Snapshot, nested: &BTreeSet<String>) -> Spent {
        let mut commands = BTreeMap::new();
        for (name, &(calls, usec)) in &later.commands {
            let (calls0, usec0) = self.commands.get(name).copied().unwrap_or((0, 0));
            let delta = (calls.saturating_sub(calls0), usec.saturating_sub(usec0));
            // The harness's own `INFO` calls are not the system's.
            if delta.0 > 0 && name != "info" {
                commands.insert(name.clone(), delta);
            }
        }
        let sent = |name: &String| !nested.contains(name) && !TRANSACTION.contains(&name.as_str());
        Spent {
            sent_calls: commands
                .iter()
                .filter(|(n, _)| sent(n))
                .map(|(_, c)| c.0)
                .sum(),
            sent_usec: commands
                .iter()
                .filter(|(n, _)| sent(n))
                .map(|(_, c)| c.1)
                .sum(),
            cpu_main_us: later.cpu_main_us - self.cpu_main_us,
            nested: commands
                .keys()
                .filter(|name| !sent(name))
                .cloned()
                .collect(),
            commands,
        }
    }
}

/// `MULTI`/`EXEC`: the commands a transaction runs are counted one by one, and `EXEC`'s
/// time is theirs again, so it is left out of the sum.
const TRANSACTION: [&str; 2] = ["multi", "exec"];

/// The server's work during one run.
///
/// `INFO commandstats` counts a command that a script (or a transaction) runs as a call of
/// its own, and the script's time already includes it. So the sum of every command's time
/// counts a script's inner commands twice. Here `sent_*` sums what clients sent: scripts
/// (`EVAL*`, `FCALL*`) whole, and every other command whose name none of the system's
/// scripts run. A command sent directly whose name a script also runs is left out
/// (undercounted): the per-command table shows each one.
pub(crate) struct Spent {
    pub(crate) sent_calls: u64,
    pub(crate) sent_usec: u64,
    pub(crate) cpu_main_us: f64,
    /// Commands left out of the sum, as possibly run by a script or a transaction.
    pub(crate) nested: BTreeSet<String>,
    /// Every command's calls and µs during the run.
    pub(crate) commands: BTreeMap<String, (u64, u64)>,
}

/// What is left on the server: the number of keys and the sum of `MEMORY USAGE … SAMPLES 0`
/// over them (every element counted).
pub(crate) async fn key_bytes(con: &mut MultiplexedConnection) -> Result<(u64, u64), String> {
    let mut cursor: u64 = 0;
    let (mut keys, mut bytes) = (0u64, 0u64);
    loop {
        let (next, batch): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(1000)
            .query_async(con)
            .await
            .map_err(|e| format!("SCAN: {e}"))?;
        if !batch.is_empty() {
            let mut pipe = redis::pipe();
            for key in &batch {
                pipe.cmd("MEMORY")
                    .arg("USAGE")
                    .arg(key)
                    .arg("SAMPLES")
                    .arg(0);
            }
            let sizes: Vec<Option<u64>> = pipe
                .query_async(con)
                .await
                .map_err(|e| format!("MEMORY USAGE: {e}"))?;
            keys += batch.len() as u64;
            bytes += sizes.into_iter().flatten().sum::<u64>();
        }
        cursor = next;
        if cursor == 0 {
            return Ok((keys, bytes));
        }
    }
}

/// The names of the commands that scripts run (`redis.call('XADD', …)`,
/// `redis.pcall("get", …)`, BullMQ's `rcall("HSET", …)`), lowercased, from every `.lua`
/// and `.rs` file under `dir`. A name computed at run time is not found; those commands
/// count as sent.
pub(crate) fn script_commands(dir: &std::path::Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let source = matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("lua" | "rs")
            );
            let Some(text) = source
                .then(|| std::fs::read_to_string(&path).ok())
                .flatten()
            else {
                continue;
            };
            for (at, _) in text.match_indices("call(") {
                let rest = text[at + 5..].trim_start();
                let Some(quote) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
                    continue;
                };
                let name: String = rest[1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                if !name.is_empty() && rest[1 + name.len()..].starts_with(quote) {
                    names.insert(name.to_ascii_lowercase());
                }
            }
        }
    }
    names
}
