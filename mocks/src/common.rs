//! Pieces shared by the LLM and MCP mocks: the journal store, timestamps, header maps, shutdown.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use http::HeaderMap;

/// Most entries a journal keeps; older ones are dropped first so a long-running mock stays small.
pub(crate) const JOURNAL_LIMIT: usize = 50_000;

/// An append-only list of entries that can be updated in place until it is cleared. Keeps the
/// latest [`JOURNAL_LIMIT`] entries.
#[derive(Debug)]
pub(crate) struct Journal<T> {
    inner: Mutex<JournalInner<T>>,
}

#[derive(Debug)]
struct JournalInner<T> {
    generation: u64,
    /// Sequence number of `entries[0]`.
    base: u64,
    entries: VecDeque<T>,
}

/// Identifies an entry pushed into a [`Journal`], to update it later.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    generation: u64,
    seq: u64,
}

impl<T: Clone> Journal<T> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(JournalInner {
                generation: 0,
                base: 0,
                entries: VecDeque::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, JournalInner<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn push(&self, entry: T) -> Ticket {
        let dropped;
        let ticket;
        {
            let mut g = self.lock();
            ticket = Ticket {
                generation: g.generation,
                seq: g.base + g.entries.len() as u64,
            };
            g.entries.push_back(entry);
            dropped = if g.entries.len() > JOURNAL_LIMIT {
                g.base += 1;
                g.entries.pop_front()
            } else {
                None
            };
        }
        drop(dropped); // outside the lock
        ticket
    }

    /// Applies `f` to the entry, unless the journal was cleared (or the entry dropped) since.
    pub(crate) fn update(&self, ticket: Ticket, f: impl FnOnce(&mut T)) {
        let mut g = self.lock();
        if g.generation == ticket.generation
            && let Some(i) = ticket.seq.checked_sub(g.base)
            && let Some(e) = usize::try_from(i).ok().and_then(|i| g.entries.get_mut(i))
        {
            f(e);
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<T> {
        self.lock().entries.iter().cloned().collect()
    }

    /// Removes and returns every entry; later updates of the removed entries are dropped.
    pub(crate) fn take(&self) -> Vec<T> {
        let taken = {
            let mut g = self.lock();
            g.generation += 1;
            g.base = 0;
            std::mem::take(&mut g.entries)
        };
        taken.into()
    }

    pub(crate) fn clear(&self) {
        let old = {
            let mut g = self.lock();
            g.generation += 1;
            g.base = 0;
            std::mem::take(&mut g.entries)
        };
        drop(old); // outside the lock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_keeps_the_latest_entries_and_updates_by_ticket() {
        let j = Journal::<usize>::new();
        let first = j.push(0);
        for i in 1..=JOURNAL_LIMIT {
            j.push(i);
        }
        let last = j.push(JOURNAL_LIMIT + 1);
        let snap = j.snapshot();
        assert_eq!(snap.len(), JOURNAL_LIMIT);
        assert_eq!(snap[0], 2);
        j.update(first, |e| *e = usize::MAX); // dropped: no effect
        j.update(last, |e| *e = 7);
        let snap = j.snapshot();
        assert!(!snap.contains(&usize::MAX));
        assert_eq!(*snap.last().unwrap(), 7);
        j.clear();
        j.update(last, |e| *e = 8);
        assert!(j.snapshot().is_empty());
    }

    #[test]
    fn take_returns_the_entries_once_and_drops_later_updates_of_them() {
        let j = Journal::<usize>::new();
        let first = j.push(1);
        j.push(2);
        assert_eq!(j.take(), [1, 2]);
        j.update(first, |e| *e = 9); // taken: no effect on what comes next
        j.push(3);
        assert_eq!(j.take(), [3]);
        assert!(j.take().is_empty());
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

    /// Serves `app` on `listener`, over TLS when `tls` is given, until cancelled.
    pub(crate) fn serve_with(
        listener: tokio::net::TcpListener,
        app: axum::Router,
        tls: Option<&crate::tls::MockTls>,
    ) -> Self {
        let Some(tls) = tls else {
            return Self::serve(listener, app);
        };
        let ct = tokio_util::sync::CancellationToken::new();
        let stop = ct.clone();
        let task = match crate::tls::TlsListener::new(listener, tls, ct.clone()) {
            Ok(listener) => tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, app)
                    .with_graceful_shutdown(stop.cancelled_owned())
                    .await
                {
                    tracing::warn!("mock server stopped with an error: {e}");
                }
            }),
            Err(e) => {
                tracing::warn!("mock TLS listener failed: {e}");
                tokio::spawn(async {})
            }
        };
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

/// The 401 a mock that requires a bearer answers a request without the right one: an OAuth
/// `invalid_token` body and its `WWW-Authenticate` challenge.
pub(crate) fn unauthorized() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let mut r = (
        http::StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({"error": "invalid_token",
            "error_description": "a valid bearer token is required"})),
    )
        .into_response();
    r.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer realm=\"pallas-mocks\", error=\"invalid_token\""),
    );
    r
}
