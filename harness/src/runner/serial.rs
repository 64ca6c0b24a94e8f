//! Scenarios marked `serial`: they use a fixed port (seed 001's default registry port), so no two
//! of them run at once in this process, and one starts only when that port is free.

use tokio::sync::{Mutex, MutexGuard};

use super::HarnessError;
use crate::scenario::{DEFAULT_REGISTRY_PORT, Scenario};

/// Held while a serial scenario runs.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// For a serial scenario, waits for the other serial scenarios of the process to end and checks
/// that the fixed port it needs is free; the guard keeps the others waiting until it is dropped.
/// `Err` says why the scenario cannot run (another process holds the port).
pub(super) async fn exclusive(
    s: &Scenario,
) -> Result<Option<MutexGuard<'static, ()>>, HarnessError> {
    if !s.spec.serial {
        return Ok(None);
    }
    let guard = SERIAL.lock().await;
    let fixed = s
        .spec
        .deployment
        .as_ref()
        .is_some_and(|d| d.default_registry_port);
    if fixed && let Err(e) = std::net::TcpListener::bind(("0.0.0.0", DEFAULT_REGISTRY_PORT)) {
        return Err(HarnessError::PortTaken(e));
    }
    Ok(Some(guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_port_says_which_and_what_to_do() {
        let e = HarnessError::PortTaken(std::io::ErrorKind::AddrInUse.into());
        assert_eq!(
            e.to_string(),
            format!(
                "port {DEFAULT_REGISTRY_PORT} (seed 001's default registry port) is not free \
                 (address in use): this serial scenario needs it; stop what listens there and \
                 run it again"
            )
        );
    }
}
