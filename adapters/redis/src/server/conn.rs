//! A handle's shared multiplexed connection, for scripts and plain commands. (The
//! handle's waits block on a connection of their own: `waits.rs`.)
//!
//! Every connection speaks RESP3, so that the client library reports when it closes: a
//! connection known to be closed is dialled again before anything is sent on it, and a
//! transport failure is reported as [`Error::Unknown`] only when a command may really
//! have reached the server. Each new shared connection is checked before first use
//! ([`hello`](Conn::hello)): the server's persistence and eviction settings, and the
//! epoch stored with the queue or latch, which tells a restart that lost data.

use alloc::string::{String, ToString};
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::sync::Mutex;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{
    AsyncConnectionConfig, Client, ErrorKind, ProtocolVersion, PushInfo, PushKind, RedisError,
    Script, ServerErrorKind, Value,
};

use crate::server::error::Error;
use crate::server::reply;

/// Script arguments, each turned into its wire form.
macro_rules! args {
    ($($arg:expr),* $(,)?) => {{
        let mut all: alloc::vec::Vec<alloc::vec::Vec<u8>> = alloc::vec::Vec::new();
        $(all.extend(redis::ToRedisArgs::to_redis_args(&$arg));)*
        all
    }};
}
pub(crate) use args;

/// What a handle checks on each new shared connection.
#[derive(Debug)]
pub(crate) struct Hello {
    /// The hash that holds the epoch (`run`, the server's run id when it last changed
    /// it) of the queue or latch.
    pub(crate) key: String,
    /// Whether settings that can lose, rewind or evict keys are accepted.
    pub(crate) best_effort: bool,
}

/// A live connection and the flag its driver sets when it closes.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub(crate) con: MultiplexedConnection,
    closed: Arc<AtomicBool>,
}

impl Live {
    pub(crate) fn is_closed(&self) -> bool {
        // Relaxed: a hint. Read too early, the next command fails as unknown, which is
        // still the truth: it may have reached a server.
        self.closed.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
pub(crate) struct Conn {
    client: Client,
    response_timeout: Duration,
    pub(crate) poll: Duration,
    hello: Hello,
    epoch: Script,
    shared: Mutex<Option<Live>>,
    /// The server's run id behind the shared connection.
    run_id: Mutex<String>,
    /// One dial of the shared connection at a time.
    dialing: async_lock::Mutex<()>,
}

/// A transport failure after the command was sent: the reply is lost. Anything else from
/// the server is a refusal.
pub(crate) fn classify(error: RedisError) -> Error {
    if is_auth(&error) {
        Error::Auth(error)
    } else if error.is_io_error()
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_unrecoverable_error()
    {
        Error::Unknown(error)
    } else {
        Error::Server(error)
    }
}

fn is_auth(error: &RedisError) -> bool {
    error.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(error.code(), Some("NOAUTH" | "WRONGPASS"))
}

impl Conn {
    pub(crate) fn new(
        client: Client,
        response_timeout: Duration,
        poll: Duration,
        hello: Hello,
    ) -> Self {
        // RESP3, for the notice of a closed connection.
        let info = client.get_connection_info().clone();
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        let client = Client::open(info.set_redis_settings(settings)).unwrap_or(client);
        Conn {
            client,
            response_timeout,
            poll,
            hello,
            epoch: crate::server::scripts::epoch(),
            shared: Mutex::new(None),
            run_id: Mutex::new(String::new()),
            dialing: async_lock::Mutex::new(()),
        }
    }

    /// Dials a connection whose replies time out after `timeout`.
    pub(crate) async fn dial(&self, timeout: Duration) -> Result<Live, Error> {
        let closed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&closed);
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.response_timeout))
            .set_response_timeout(Some(timeout))
            .set_push_sender(move |info: PushInfo| {
                if info.kind == PushKind::Disconnection {
                    // Relaxed: see `Live::is_closed`.
                    flag.store(true, Ordering::Relaxed);
                }
                Ok::<(), core::convert::Infallible>(())
            });
        let con = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|error| {
                if is_auth(&error) {
                    Error::Auth(error)
                } else {
                    Error::Unavailable(error)
                }
            })?;
        Ok(Live { con, closed })
    }

    /// The shared connection, dialled and checked if there is none or it closed. A
    /// command sent on it may reach the server; nothing was sent on a closed one.
    async fn shared(&self) -> Result<MultiplexedConnection, Error> {
        if let Some(live) = self.live_shared() {
            return Ok(live);
        }
        let _dialing = self.dialing.lock().await;
        if let Some(live) = self.live_shared() {
            return Ok(live);
        }
        let mut live = self.dial(self.response_timeout).await?;
        let run_id = self.hello(&mut live.con).await?;
        *lock(&self.run_id) = run_id;
        *lock(&self.shared) = Some(live.clone());
        Ok(live.con)
    }

    /// Makes sure the shared connection is up and checked (so that [`run_id`](Conn::run_id)
    /// is known).
    pub(crate) async fn connect(&self) -> Result<(), Error> {
        self.shared().await.map(drop)
    }

    fn live_shared(&self) -> Option<MultiplexedConnection> {
        let shared = lock(&self.shared);
        shared
            .as_ref()
            .filter(|live| !live.is_closed())
            .map(|live| live.con.clone())
    }

    fn forget_shared(&self) {
        *lock(&self.shared) = None;
    }

    /// The server's run id behind the shared connection (empty before the first dial).
    pub(crate) fn run_id(&self) -> String {
        lock(&self.run_id).clone()
    }

    /// Checks a new connection before its first use: refuses a server whose settings can
    /// lose, rewind or evict keys (unless best-effort), and runs the epoch script, which
    /// tells a restart that may have lost data. Returns the server's run id.
    async fn hello(&self, con: &mut MultiplexedConnection) -> Result<String, Error> {
        let mut info = redis::cmd("INFO");
        info.arg("server").arg("persistence").arg("memory");
        let text = info
            .query_async::<Value>(con)
            .await
            .map_err(classify)
            .and_then(reply::text)?;
        let field = |name: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(|value| value.trim().to_string())
        };
        let run_id = field("run_id").unwrap_or_default();
        let aof = field("aof_enabled").unwrap_or_default() == "1";
        if !self.hello.best_effort {
            if !aof {
                return Err(Error::UnsafeServer {
                    setting: "appendonly".into(),
                    value: "no".into(),
                });
            }
            if let Some(policy) = field("maxmemory_policy").filter(|p| p != "noeviction") {
                return Err(Error::UnsafeServer {
                    setting: "maxmemory-policy".into(),
                    value: policy,
                });
            }
        }
        let mut call = self.epoch.prepare_invoke();
        call.key(&self.hello.key)
            .arg(&run_id)
            .arg(if aof { "1" } else { "0" })
            .arg("check");
        let word = call
            .invoke_async::<Value>(con)
            .await
            .map_err(classify)
            .and_then(reply::text)?;
        match word.as_str() {
            "ok" | "absent" => Ok(run_id),
            "gone" => Err(Error::Gone),
            other => Err(Error::Protocol(alloc::format!("epoch: {other:?}"))),
        }
    }

    /// Marks the queue or latch as rewound (a handle saw it go back): it is gone for
    /// every handle from now on.
    pub(crate) async fn mark_rewound(&self) -> Result<(), Error> {
        let mut con = self.shared().await?;
        let mut call = self.epoch.prepare_invoke();
        call.key(&self.hello.key).arg("").arg("0").arg("rewound");
        let reply = call.invoke_async::<Value>(&mut con).await;
        self.on_shared(reply).map(drop)
    }

    /// Runs one script with `keys` as its KEYS and `args` as its ARGV.
    pub(crate) async fn script<I>(
        &self,
        script: &Script,
        keys: &[&str],
        args: I,
    ) -> Result<Value, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut con = self.shared().await?;
        // `EVALSHA` written straight into one command buffer (a `ScriptInvocation` copies
        // every argument into a vector of its own first); a server that does not have the
        // script loads it, and the call is sent again, as `ScriptInvocation` does.
        let mut call = redis::cmd("EVALSHA");
        call.arg(script.get_hash()).arg(keys.len());
        for key in keys {
            call.arg(*key);
        }
        for arg in args {
            call.arg(arg.as_ref());
        }
        let reply = match query(&mut con, &call).await {
            Err(error) if error.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                match script.load_async(&mut con).await {
                    Ok(_) => query(&mut con, &call).await,
                    Err(error) => Err(error),
                }
            }
            reply => reply,
        };
        self.on_shared(reply)
    }

    /// Runs one plain command on the shared connection.
    pub(crate) async fn command(&self, cmd: &redis::Cmd) -> Result<Value, Error> {
        let mut con = self.shared().await?;
        let reply = query(&mut con, cmd).await;
        self.on_shared(reply)
    }

    /// A reply on the shared connection, its error classified. A reply that may have been
    /// lost leaves the connection in an unknown state: it is dropped, and the next call
    /// dials again.
    fn on_shared(&self, reply: redis::RedisResult<Value>) -> Result<Value, Error> {
        reply.map_err(|error| {
            let error = classify(error);
            if error.is_unknown() {
                self.forget_shared();
            }
            error
        })
    }

    /// The timeout of a blocking read: the block itself plus the response timeout.
    pub(crate) fn blocking_timeout(&self) -> Duration {
        self.response_timeout + self.poll
    }
}

/// Sends `cmd` and reads its reply as `Cmd::query_async::<Value>` does: a server error
/// anywhere in the reply is the call's error. A reply without one is kept as it came
/// (`Value::extract_error` rebuilds every array of it, one more pass over every entry).
async fn query(con: &mut impl ConnectionLike, cmd: &redis::Cmd) -> redis::RedisResult<Value> {
    let value = con.req_packed_command(cmd).await?;
    if holds_error(&value) {
        value.extract_error()
    } else {
        Ok(value)
    }
}

/// Whether `value` is or holds a server error, wherever `Value::extract_error` looks.
fn holds_error(value: &Value) -> bool {
    match value {
        Value::ServerError(_) => true,
        Value::Array(items) | Value::Set(items) | Value::Push { data: items, .. } => {
            items.iter().any(holds_error)
        }
        Value::Map(pairs) => pairs.iter().any(|(k, v)| holds_error(k) || holds_error(v)),
        Value::Attribute { data, attributes } => {
            holds_error(data)
                || attributes
                    .iter()
                    .any(|(k, v)| holds_error(k) || holds_error(v))
        }
        _ => false,
    }
}

/// Locks a mutex that guards plain data; a panic elsewhere cannot leave it half-updated.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_holds_an_error_where_extract_error_finds_one() {
        let replies: [&[u8]; 9] = [
            b"-ERR top\r\n",
            b":1\r\n",
            b"$3\r\nabc\r\n",
            b"*0\r\n",
            b"*2\r\n:1\r\n$1\r\na\r\n",
            b"*2\r\n:1\r\n-ERR nested\r\n",
            b"*2\r\n*2\r\n$1\r\na\r\n*1\r\n-WRONGTYPE deep\r\n:3\r\n",
            b"%1\r\n$1\r\nk\r\n-ERR in a map\r\n",
            b"%1\r\n$1\r\nk\r\n*1\r\n$1\r\nv\r\n",
        ];
        for bytes in replies {
            let value = redis::parse_redis_value(bytes).unwrap();
            let extracted = value.clone().extract_error();
            assert_eq!(holds_error(&value), extracted.is_err(), "{value:?}");
            if let Ok(kept) = extracted {
                assert_eq!(kept, value);
            }
        }
    }
}
