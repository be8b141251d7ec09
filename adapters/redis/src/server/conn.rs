//! Connections: one shared multiplexed connection for scripts, and a pool of dedicated ones
//! for blocking reads (a blocking read would stall every command behind it on a shared
//! connection). A connection that failed is dropped and the next call dials again.

use alloc::vec::Vec;
use core::time::Duration;
use std::sync::Mutex;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError, Script, Value};

use crate::server::error::Error;

#[derive(Debug)]
pub(crate) struct Conn {
    client: Client,
    shared_config: AsyncConnectionConfig,
    blocking_config: AsyncConnectionConfig,
    shared: Mutex<Option<MultiplexedConnection>>,
    idle_blocking: Mutex<Vec<MultiplexedConnection>>,
}

/// Script arguments, each turned into its wire form.
macro_rules! args {
    ($($arg:expr),* $(,)?) => {{
        let mut all: alloc::vec::Vec<alloc::vec::Vec<u8>> = alloc::vec::Vec::new();
        $(all.extend(redis::ToRedisArgs::to_redis_args(&$arg));)*
        all
    }};
}
pub(crate) use args;

/// A transport failure after the command was sent: the reply is lost. Anything else from
/// the server is a refusal.
fn classify(error: RedisError) -> Error {
    if error.is_io_error()
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

impl Conn {
    pub(crate) fn new(client: Client, response_timeout: Duration, poll: Duration) -> Self {
        let connect = Some(response_timeout);
        Conn {
            client,
            shared_config: AsyncConnectionConfig::new()
                .set_connection_timeout(connect)
                .set_response_timeout(Some(response_timeout)),
            blocking_config: AsyncConnectionConfig::new()
                .set_connection_timeout(connect)
                .set_response_timeout(Some(response_timeout + poll)),
            shared: Mutex::new(None),
            idle_blocking: Mutex::new(Vec::new()),
        }
    }

    async fn dial(&self, config: &AsyncConnectionConfig) -> Result<MultiplexedConnection, Error> {
        self.client
            .get_multiplexed_async_connection_with_config(config)
            .await
            .map_err(Error::Unavailable)
    }

    async fn shared(&self) -> Result<MultiplexedConnection, Error> {
        if let Some(con) = lock(&self.shared).clone() {
            return Ok(con);
        }
        let con = self.dial(&self.shared_config).await?;
        *lock(&self.shared) = Some(con.clone());
        Ok(con)
    }

    fn forget_shared(&self) {
        *lock(&self.shared) = None;
    }

    /// Runs one script with the queue's fixed keys and `extra` as KEYS[8].
    pub(crate) async fn script(
        &self,
        script: &Script,
        keys: &[alloc::string::String; 7],
        extra: Option<&str>,
        args: &[Vec<u8>],
    ) -> Result<Value, Error> {
        let mut all: Vec<&str> = keys.iter().map(alloc::string::String::as_str).collect();
        all.extend(extra);
        self.script_with(script, &all, args).await
    }

    /// Runs one script with `keys` as its KEYS (the latch's scripts, whose keys are not
    /// the queue's seven).
    pub(crate) async fn script_with(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[Vec<u8>],
    ) -> Result<Value, Error> {
        let mut con = self.shared().await?;
        let mut call = script.prepare_invoke();
        for key in keys {
            call.key(*key);
        }
        for arg in args {
            call.arg(arg.as_slice());
        }
        let reply = call.invoke_async::<Value>(&mut con).await;
        self.on_shared(reply)
    }

    /// Runs one plain command on the shared connection.
    pub(crate) async fn command(&self, cmd: &redis::Cmd) -> Result<Value, Error> {
        let mut con = self.shared().await?;
        let reply = cmd.query_async::<Value>(&mut con).await;
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

    /// Runs a blocking command on a dedicated connection. The connection goes back to the
    /// pool only after a reply; a failed or cancelled call drops it.
    pub(crate) async fn blocking(&self, cmd: &redis::Cmd) -> Result<Value, Error> {
        let taken = lock(&self.idle_blocking).pop();
        let mut con = match taken {
            Some(con) => con,
            None => self.dial(&self.blocking_config).await?,
        };
        let value = cmd.query_async::<Value>(&mut con).await.map_err(classify)?;
        lock(&self.idle_blocking).push(con);
        Ok(value)
    }
}

/// Locks a mutex that guards plain data; a panic elsewhere cannot leave it half-updated.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
