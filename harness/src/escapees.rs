//! Descendants that leave their process group: an implementation that forks and calls
//! `setsid()`, or double-forks, is out of reach of the group kill. Every launch carries a
//! marker in its environment (`PALLAS_CONFORMANCE_LAUNCH=<harness pid>:<start>:<n>`), which
//! children inherit whatever session or group they move to; stopping a launch ends every
//! process of the user that carries its marker (found in `/proc/<pid>/environ`, readable for
//! one's own processes without root). At its first launch a harness also ends processes whose
//! marker names a harness that no longer runs (a run killed from outside), and removes the run
//! folders such a run left behind.

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable that marks a launch and all its descendants.
pub const MARKER_ENV: &str = "PALLAS_CONFORMANCE_LAUNCH";

/// The prefix of every run folder; the harness's identity follows it (`<pid>.<start>-`).
pub const RUN_DIR_PREFIX: &str = "pallas-conformance-";

/// This process's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// `<pid>.<start ticks>` of this harness process: who owns a marker or a run folder.
pub fn harness_identity() -> String {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        let start = i32::try_from(pid).ok().and_then(start_ticks).unwrap_or(0);
        format!("{pid}.{start}")
    })
    .clone()
}

/// Whether the harness named by `identity` (`<pid>.<start>`) still runs.
fn alive(identity: &str) -> bool {
    let Some((pid, start)) = identity.split_once('.') else {
        return true; // not ours to judge
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<i32>(), start.parse::<u64>()) else {
        return true;
    };
    start_ticks(pid) == Some(start)
}

/// A new marker for one launch.
pub fn new_marker() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}:{}",
        harness_identity(),
        N.fetch_add(1, Ordering::SeqCst) + 1
    )
}

/// Processes (other than this one) whose environment carries `MARKER_ENV=<value>` for which
/// `wanted(value)` holds.
fn marked(wanted: impl Fn(&str) -> bool) -> Vec<i32> {
    let me = std::process::id();
    let prefix = format!("{MARKER_ENV}=");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0).any(|var| {
                    std::str::from_utf8(var)
                        .ok()
                        .and_then(|v| v.strip_prefix(prefix.as_str()))
                        .is_some_and(&wanted)
                })
            })
        })
        .filter_map(|pid| i32::try_from(pid).ok())
        .collect()
}

/// Ends (SIGKILL) every process carrying `marker`, wherever its session or group; returns how
/// many there were. Zombies of them that are this process's children are reaped.
pub fn end_marked(marker: &str) -> usize {
    end(&marked(|v| v == marker))
}

/// Ends every process launched by this harness and its descendants, wherever they moved.
pub fn end_all_of_this_harness() -> usize {
    let owner = format!("{}:", harness_identity());
    end(&marked(|v| v.starts_with(owner.as_str())))
}

/// The pids of the live processes launched by this harness (or descended from one), zombies
/// left out: what a finished run must not leave.
pub fn left_by_this_harness() -> Vec<i32> {
    let owner = format!("{}:", harness_identity());
    marked(|v| v.starts_with(owner.as_str()))
        .into_iter()
        .filter(|pid| running(*pid))
        .collect()
}

/// The pids of the processes carrying `marker`.
pub fn carrying(marker: &str) -> Vec<i32> {
    marked(|v| v == marker)
}

fn end(pids: &[i32]) -> usize {
    for pid in pids {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    // SIGKILL is delivered, not yet carried out: wait (briefly, with a deadline) until each
    // one is gone or a zombie, so a caller that looks right after finds none alive.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        for pid in pids {
            let _ = nix::sys::wait::waitpid(
                Pid::from_raw(*pid),
                Some(nix::sys::wait::WaitPidFlag::WNOHANG),
            );
        }
        if pids.iter().all(|p| !running(*p)) || std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    pids.len()
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|st| st != "Z")
        })
        .unwrap_or(false)
}

/// Once per harness process: ends the processes left by harness runs that no longer run, and
/// removes their run folders from the temporary directory.
pub fn sweep_stale_once() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let stale = marked(|v| v.rsplit_once(':').is_some_and(|(owner, _)| !alive(owner)));
        end(&stale);
        remove_stale_dirs(&std::env::temp_dir());
    });
}

/// Removes `pallas-conformance-<pid>.<start>-*` folders under `dir` whose harness is gone.
fn remove_stale_dirs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(RUN_DIR_PREFIX)) else {
            continue;
        };
        let Some((owner, _)) = rest.split_once('-') else {
            continue;
        };
        if owner.contains('.') && !alive(owner) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_harness_is_alive_and_a_made_up_one_is_not() {
        let me = harness_identity();
        assert!(alive(&me), "{me}");
        assert!(!alive("999999999.1"));
        let m = new_marker();
        assert!(m.starts_with(&format!("{me}:")), "{m}");
        assert_ne!(m, new_marker());
    }

    #[test]
    fn stale_run_folders_are_removed_and_live_ones_kept() -> std::io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let stale = tmp.path().join(format!("{RUN_DIR_PREFIX}999999999.1-abc"));
        let live = tmp
            .path()
            .join(format!("{RUN_DIR_PREFIX}{}-abc", harness_identity()));
        std::fs::create_dir_all(&stale)?;
        std::fs::create_dir_all(&live)?;
        remove_stale_dirs(tmp.path());
        assert!(!stale.exists());
        assert!(live.exists());
        Ok(())
    }
}
