//! `qx-probe-pings-persistent-session` (a `defects` build only): each agent's downstream clients,
//! so a health probe can ping the agent's own session instead of opening one.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use super::Downstream;

/// Agent → its downstream clients, in the card's order.
static DOWNSTREAMS: Mutex<BTreeMap<String, Vec<Weak<Downstream>>>> = Mutex::new(BTreeMap::new());

/// `qx-probe-pings-persistent-session`: the downstream clients `agent` calls its tools through.
pub fn remember_downstreams(agent: &str, downstreams: &[Arc<Downstream>]) {
    if let Ok(mut all) = DOWNSTREAMS.lock() {
        all.insert(
            agent.to_owned(),
            downstreams.iter().map(Arc::downgrade).collect(),
        );
    }
}

/// `qx-probe-pings-persistent-session`: the client of `agent` for the server called `server`.
pub fn downstream_of(agent: &str, server: &str) -> Option<Arc<Downstream>> {
    DOWNSTREAMS
        .lock()
        .ok()?
        .get(agent)?
        .iter()
        .filter_map(Weak::upgrade)
        .find(|downstream| downstream.name() == server)
}
