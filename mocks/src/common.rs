//! Pieces shared by the LLM and MCP mocks: the journal store, timestamps, header maps, shutdown.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use http::HeaderMap;

/// An append-only list of entries that can be updated in place until it is cleared.
#[derive(Debug)]
pub(crate) struct Journal<T> {
    inner: Mutex<JournalInner<T>>,
}

#[derive(Debug)]
struct JournalInner<T> {
    generation: u64,
    entries: Vec<T>,
}

/// Identifies an entry pushed into a [`Journal`], to update it later.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    generation: u64,
    index: usize,
}

impl<T: Clone> Journal<T> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(JournalInner {
                generation: 0,
                entries: Vec::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, JournalInner<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn push(&self, entry: T) -> Ticket {
        let mut g = self.lock();
        g.entries.push(entry);
        Ticket {
            generation: g.generation,
            index: g.entries.len() - 1,
        }
    }

    /// Applies `f` to the entry, unless the journal was cleared since it was pushed.
    pub(crate) fn update(&self, ticket: Ticket, f: impl FnOnce(&mut T)) {
        let mut g = self.lock();
        if g.generation == ticket.generation
            && let Some(e) = g.entries.get_mut(ticket.index)
        {
            f(e);
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<T> {
        self.lock().entries.clone()
    }

    pub(crate) fn clear(&self) {
        let mut g = self.lock();
        g.generation += 1;
        g.entries = Vec::new();
    }
}

/// Now, RFC 3339 UTC with microseconds.
pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Header map with lower-cased names; repeated headers joined with `, `.
pub(crate) fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let v = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_owned())
            .and_modify(|e| {
                e.push_str(", ");
                e.push_str(&v);
            })
            .or_insert(v);
    }
    out
}

/// Locks a mutex, recovering from poisoning (a panicked holder cannot leave our data invalid).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running axum server: stops (gracefully, with a deadline) on [`ServerHandle::shutdown`] or
/// when dropped.
#[derive(Debug)]
pub(crate) struct ServerHandle {
    pub(crate) ct: tokio_util::sync::CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ServerHandle {
    /// Serves `app` on `listener` until cancelled.
    pub(crate) fn serve(listener: tokio::net::TcpListener, app: axum::Router) -> Self {
        use axum::serve::ListenerExt;
        let ct = tokio_util::sync::CancellationToken::new();
        let stop = ct.clone();
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("could not set TCP_NODELAY: {e}");
            }
        });
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await
            {
                tracing::warn!("mock server stopped with an error: {e}");
            }
        });
        Self {
            ct,
            task: Some(task),
        }
    }

    /// A handle with no server (e.g. a `down` MCP mock): only the cancellation token.
    pub(crate) fn idle() -> Self {
        Self {
            ct: tokio_util::sync::CancellationToken::new(),
            task: None,
        }
    }

    /// A handle over an arbitrary task that stops when the token is cancelled.
    pub(crate) fn from_task(
        ct: tokio_util::sync::CancellationToken,
        task: tokio::task::JoinHandle<()>,
    ) -> Self {
        Self {
            ct,
            task: Some(task),
        }
    }

    /// Stops the server, waiting up to 5 s for in-flight requests before aborting them.
    pub(crate) async fn shutdown(mut self) {
        self.ct.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(std::time::Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.ct.cancel();
        if let Some(task) = self.task.take() {
            // Graceful shutdown is already signalled; make sure nothing outlives the handle.
            let abort = task.abort_handle();
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    if tokio::time::timeout(std::time::Duration::from_secs(5), task)
                        .await
                        .is_err()
                    {
                        abort.abort();
                    }
                });
            } else {
                abort.abort();
            }
        }
    }
}
