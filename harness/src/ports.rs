//! Ports for an implementation under test to listen on, chosen where no other process can be
//! given them meanwhile.

/// Ports never handed out: seed 001's default registry port (24200), which a `serial` scenario
/// uses, and the few after it (a broken variant's wrong default lands there).
const FIXED: std::ops::RangeInclusive<u16> =
    crate::scenario::DEFAULT_REGISTRY_PORT..=crate::scenario::DEFAULT_REGISTRY_PORT + 9;

/// A free TCP port on 127.0.0.1 for an implementation to listen on. It is taken below the
/// kernel's ephemeral range (`ip_local_port_range`), where no outgoing connection and no
/// `bind(…:0)` of another process can be given it between this call and the implementation's
/// own bind; a candidate is used only when both `127.0.0.1` and `0.0.0.0` can bind it. A port
/// handed out recently by this process (the last 4,096) is never handed out twice: one
/// deployment's registry and agents get distinct ports even when nothing binds them yet.
pub fn free_port() -> Result<u16, std::io::Error> {
    use std::hash::{BuildHasher, Hasher};
    static RECENT: std::sync::Mutex<std::collections::VecDeque<u16>> =
        std::sync::Mutex::new(std::collections::VecDeque::new());
    let (low, high) = reserved_range();
    let seed = std::collections::hash_map::RandomState::new();
    for attempt in 0..512u32 {
        let mut h = seed.build_hasher();
        h.write_u32(attempt);
        h.write_u32(std::process::id());
        let span = u64::from(high - low) + 1;
        let Ok(port) = u16::try_from(u64::from(low) + h.finish() % span) else {
            continue;
        };
        let mut recent = RECENT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if recent.contains(&port) || FIXED.contains(&port) || !bindable(port) {
            continue;
        }
        if recent.len() >= 4096 {
            recent.pop_front();
        }
        recent.push_back(port);
        return Ok(port);
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        format!("no free port in {low}-{high} that this run has not handed out already"),
    ))
}

/// Ports below the kernel's ephemeral range (default 32768), from 20000 on.
fn reserved_range() -> (u16, u16) {
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    if ephemeral_low > 21_000 {
        (20_000, ephemeral_low - 1)
    } else {
        // An unusual ephemeral range: fall back to the ports above it.
        (ephemeral_low.saturating_add(30_000).min(60_000), 65_000)
    }
}

/// Both `127.0.0.1:port` and `0.0.0.0:port` can be bound now.
fn bindable(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
        && std::net::TcpListener::bind(("0.0.0.0", port)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_never_handed_out_twice() {
        let ports: Vec<u16> = (0..200).map(|_| free_port().unwrap()).collect();
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
    }

    #[test]
    fn free_ports_avoid_the_fixed_ports_of_serial_scenarios() {
        // 3,000 draws from about 12,800 ports: were the 10 not excluded, one of them would come
        // up with a probability of about 90 %.
        for _ in 0..3000 {
            let port = free_port().unwrap();
            assert!(
                !FIXED.contains(&port),
                "{port} is kept for serial scenarios"
            );
        }
    }

    #[test]
    fn free_ports_lie_below_the_ephemeral_range() {
        let (low, high) = reserved_range();
        assert!(low >= 1024 && low < high, "{low}-{high}");
        for _ in 0..50 {
            let port = free_port().unwrap();
            assert!((low..=high).contains(&port), "{port} outside {low}-{high}");
        }
    }

    #[test]
    fn free_ports_are_nonzero_and_bindable() {
        let port = free_port().unwrap();
        assert_ne!(port, 0);
        std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    }
}
