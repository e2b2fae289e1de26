//! Supervising one child probe: its request, answer and log files, its deadline, and why it
//! gave no answer when it gave none.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nppbench_model::FailureKind;

use super::{RunError, io_error};
use crate::error::ProbeError;
use crate::protocol::{PROBE_PIDS_ENV, PROBE_SUBCOMMAND, Request};

/// How a child probe ended.
pub(super) enum Exit {
    Status(ExitStatus),
    TimedOut(Duration),
    /// The run was interrupted (Ctrl-C, SIGTERM) and the probe killed.
    Interrupted,
    /// The answer is in place; the process may still be exiting.
    Answered,
}

/// A child probe: its files in the work folder.
pub(super) struct Child<'a> {
    pub(super) work_dir: PathBuf,
    pub(super) probe_exe: &'a Path,
    pub(super) stop: &'a AtomicBool,
    pub(super) name: String,
    /// Where every probe of the run is listed by pid as it starts ([`PROBE_PIDS_ENV`]).
    pub(super) pids_file: PathBuf,
    /// Variables set for this probe beyond nppbench's own environment.
    pub(super) env: &'a [(&'a str, String)],
}

/// Appends `pid` to the run's list of probes (one line, one write: appends from several
/// threads do not interleave).
fn record_pid(file: &Path, pid: u32) {
    use std::io::Write;
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(file) {
        let _ = f.write_all(format!("{pid}\n").as_bytes());
    }
}

impl Child<'_> {
    fn path(&self, ext: &str) -> PathBuf {
        self.work_dir.join(format!("{}.{ext}", self.name))
    }

    /// Writes the request, starts the probe and waits for it. The deadline is `timeout` from
    /// the start, moved on whenever the answer file grows (a probe that streams answers).
    pub(super) fn run(&self, request: &Request, timeout: Duration) -> Result<Exit, RunError> {
        self.run_until(request, timeout, None).map(|(exit, _)| exit)
    }

    /// As [`Child::run`] for a probe that streams one answer line per scenario: returns once
    /// `lines` whole lines are in place, with the process still exiting (tearing down its CUDA
    /// context is the driver's work and need not hold the next probe back). The caller reaps the
    /// process.
    pub(super) fn run_until_lines(
        &self,
        request: &Request,
        timeout: Duration,
        lines: usize,
    ) -> Result<(Exit, Option<std::process::Child>), RunError> {
        self.run_until(request, timeout, Some(lines))
    }

    /// Runs the probe; with `early`, returns as soon as the answer holds that many whole lines
    /// (0: any answer at all, written whole).
    fn run_until(
        &self,
        request: &Request,
        timeout: Duration,
        early: Option<usize>,
    ) -> Result<(Exit, Option<std::process::Child>), RunError> {
        let req = self.path("request.json");
        let resp = self.path("answer.json");
        let json = serde_json::to_string(request).expect("requests serialise");
        std::fs::write(&req, json).map_err(io_error("writing probe request", &req))?;
        let _ = std::fs::remove_file(&resp);
        let log = self.path("log");
        let stdout = std::fs::File::create(&log).map_err(io_error("creating probe log", &log))?;
        let err = self.path("stderr");
        let stderr = std::fs::File::create(&err).map_err(io_error("creating probe log", &err))?;
        let mut child = Command::new(self.probe_exe)
            .arg(PROBE_SUBCOMMAND)
            .arg("--request")
            .arg(&req)
            .arg("--answer")
            .arg(&resp)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            // Its own process group: a Ctrl-C reaches nppbench, which decides what to stop.
            .process_group(0)
            .env(PROBE_PIDS_ENV, &self.pids_file)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .spawn()
            .map_err(io_error("starting probe", self.probe_exe))?;
        record_pid(&self.pids_file, child.id());
        let mut deadline = Instant::now() + timeout;
        let mut seen_len = 0;
        loop {
            if let Some(status) = child
                .try_wait()
                .map_err(io_error("waiting for probe", self.probe_exe))?
            {
                return Ok((Exit::Status(status), None));
            }
            let len = std::fs::metadata(&resp).map_or(0, |m| m.len());
            let answered = match early {
                Some(0) => len > 0,
                Some(lines) => {
                    len != seen_len
                        && std::fs::read(&resp).is_ok_and(|a| a.iter().filter(|b| **b == b'\n').count() >= lines)
                }
                None => false,
            };
            if answered {
                return Ok((Exit::Answered, Some(child)));
            }
            if len != seen_len {
                seen_len = len;
                deadline = Instant::now() + timeout;
            }
            let stop = self.stop.load(Ordering::SeqCst);
            if stop || Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Ok((
                    if stop {
                        Exit::Interrupted
                    } else {
                        Exit::TimedOut(timeout)
                    },
                    None,
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub(super) fn answer(&self) -> Option<String> {
        std::fs::read_to_string(self.path("answer.json")).ok()
    }

    /// Why the probe gave no answer, with the end of what it printed to stderr.
    pub(super) fn failure(&self, exit: &Exit) -> ProbeError {
        let (kind, why) = match exit {
            Exit::TimedOut(t) => (
                FailureKind::Timeout,
                format!("timed out after {} s and was killed", t.as_secs()),
            ),
            Exit::Interrupted => (FailureKind::Other, "interrupted".to_owned()),
            Exit::Answered => (FailureKind::Other, "the probe answered".to_owned()),
            Exit::Status(status) => (FailureKind::Crash, describe_status(status)),
        };
        let mut tail = String::new();
        if let Ok(mut f) = std::fs::File::open(self.path("stderr")) {
            let _ = f.read_to_string(&mut tail);
        }
        let tail: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
        ProbeError::new(kind, if tail.is_empty() { why } else { format!("{why}: {tail}") })
    }
}

fn describe_status(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        let name = match sig {
            4 => " (SIGILL)",
            6 => " (SIGABRT)",
            7 => " (SIGBUS)",
            8 => " (SIGFPE)",
            9 => " (SIGKILL)",
            11 => " (SIGSEGV)",
            15 => " (SIGTERM)",
            _ => "",
        };
        return format!("the probe was killed by signal {sig}{name}");
    }
    match status.code() {
        Some(0) => "the probe exited without an answer".to_owned(),
        Some(c) => format!("the probe exited with status {c}"),
        None => "the probe ended abnormally".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::protocol::Devices;

    /// A stand-in probe (a shell script, no GPU): writes its answer lines, the variable it was
    /// given among them, then takes its time to exit, as a probe tearing its context down does.
    fn script(dir: &Path) -> PathBuf {
        let exe = dir.join("probe.sh");
        std::fs::write(
            &exe,
            "#!/bin/sh\n# probe --request R --answer A\nprintf 'one\\n%s\\n' \"$CUDA_DEVICE_MAX_CONNECTIONS\" > \"$5\"\nsleep 5\n",
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    #[test]
    fn a_streamed_answer_is_taken_once_its_lines_are_in_and_the_probe_gets_its_variables() {
        let dir = tempfile::tempdir().unwrap();
        let exe = script(dir.path());
        let stop = AtomicBool::new(false);
        let env = [("CUDA_DEVICE_MAX_CONNECTIONS", "1".to_owned())];
        let child = Child {
            work_dir: dir.path().to_owned(),
            probe_exe: &exe,
            stop: &stop,
            name: "p".into(),
            pids_file: dir.path().join("pids"),
            env: &env,
        };
        let request = Request::Environment {
            npp_dir: None,
            devices: Devices::All,
        };
        let started = Instant::now();
        let (exit, exiting) = child.run_until_lines(&request, Duration::from_secs(30), 2).unwrap();
        assert!(matches!(exit, Exit::Answered));
        assert!(started.elapsed() < Duration::from_secs(4), "waited for the exit");
        let mut exiting = exiting.expect("the probe is still exiting");
        assert!(exiting.try_wait().unwrap().is_none());
        let _ = exiting.kill();
        let _ = exiting.wait();
        assert_eq!(child.answer().unwrap(), "one\n1\n");
    }
}
