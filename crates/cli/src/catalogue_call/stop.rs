//! Stopping `call-catalogue`'s children at Ctrl-C or SIGTERM (a batch system's time limit): no new
//! child starts, each running one is sent SIGTERM, and the parent then merges the lines written so
//! far into `--out` as it does at the end, so that an interrupted run keeps every function that
//! finished (before, the lines stayed in the children's part files beside it).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The children running, and whether the run was told to stop.
#[derive(Default)]
pub(crate) struct Children {
    stop: AtomicBool,
    running: Mutex<Vec<u32>>,
}

impl Children {
    /// Whether the run was told to stop.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Counts child `pid` among those running; a child that started as the stop came is sent
    /// SIGTERM at once.
    pub(crate) fn started(&self, pid: u32) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.push(pid);
        if self.stopped() {
            terminate(pid);
        }
    }

    /// Child `pid` has ended.
    pub(crate) fn ended(&self, pid: u32) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&p| p != pid);
    }

    /// Tells the run to stop and every running child to end.
    pub(crate) fn stop(&self) {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        self.stop.store(true, Ordering::SeqCst);
        for &pid in running.iter() {
            terminate(pid);
        }
    }
}

fn terminate(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // A child that ended meanwhile: nothing to do.
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;

    use super::*;

    fn sleeper() -> std::process::Child {
        Command::new("sleep").arg("30").spawn().unwrap()
    }

    #[test]
    fn a_stop_ends_the_children_running_and_any_started_after_it() {
        let children = Children::default();
        let (mut a, mut b) = (sleeper(), sleeper());
        children.started(a.id());
        children.started(b.id());
        children.ended(b.id());
        assert!(!children.stopped());
        children.stop();
        assert!(children.stopped());
        assert_eq!(a.wait().unwrap().signal(), Some(15));
        // One no longer counted as running is left alone.
        assert_eq!(b.try_wait().unwrap(), None);
        b.kill().unwrap();
        b.wait().unwrap();
        // One that starts after the stop is ended at once.
        let mut c = sleeper();
        children.started(c.id());
        assert_eq!(c.wait().unwrap().signal(), Some(15));
    }
}
