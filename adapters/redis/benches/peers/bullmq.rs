//! BullMQ under node: a child process running `bullmq.cjs`.

use std::path::Path;
use std::process::Command;

use crate::child::Process;
use crate::server::Server;
use crate::stats::script_commands;

/// Starts `node bullmq.cjs MODULES SOCKET`, MODULES being a `node_modules` folder holding
/// bullmq and ioredis.
pub(crate) fn start(modules: &Path, server: &Server) -> Result<Process, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/bullmq.cjs");
    let mut command = Command::new("node");
    command.arg(script).arg(modules).arg(server.sock());
    Process::start(
        "BullMQ (node)",
        "`Queue.add`; bulk: `Queue.addBulk` of {batch} jobs; a consumer is a `Worker` of \
         concurrency 1 whose processor returns at once; jobs are removed once completed \
         (`removeOnComplete`), as the others delete an acknowledged entry",
        command,
        script_commands(&modules.join("bullmq/dist/cjs/commands")),
    )
}
