//! Child-process roles: the test binary re-run with `ADAPTER_REDIS_ROLE` set.

use super::Rt;

pub fn run_if_child() {
    let Ok(role) = std::env::var(super::ROLE) else {
        return;
    };
    let rt = Rt::from_env();
    panic!("unknown role {role} on {rt:?}");
}
