//! One NVML listing of a device's compute processes, shared by the memory probes of a run on that
//! device. A probe reads its own memory after every call of a scenario; each reading is a
//! listing, and listings made by many processes at once slow one another down (25.5 µs alone,
//! 1.07 ms with 8 processes listing, 5.36 ms with 16, on one H100:
//! `reports/performance/h100-GPU-49d9c044-nvml/`). Here the run's parent lists for all of them: a
//! probe asks over a Unix socket, and gets a listing begun after it asked, which one listing
//! answers for every probe that asked before it began.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::thread::JoinHandle;

use crate::GpuError;
use crate::process::DeviceProcess;

/// The folder of the run's listing sockets, one a device named `UUID.sock`, as the run's parent
/// tells its memory probes; unset, each probe lists for itself.
pub const LISTINGS_ENV: &str = "NPPBENCH_NVML_LISTINGS";

/// The socket of device `uuid` in the folder `dir`.
pub fn socket_path(dir: &Path, uuid: &str) -> PathBuf {
    dir.join(format!("{uuid}.sock"))
}

/// What one listing gives: the processes, or why NVML gave none.
type Answer = Result<Vec<DeviceProcess>, String>;

/// The askers waiting for the next listing, and whether the server is stopping.
#[derive(Default)]
struct Waiting {
    askers: Vec<mpsc::SyncSender<Answer>>,
    stopping: bool,
}

/// Lists for every probe of one device that asks, one listing for all who asked before it began.
/// Stopped (its socket removed) when dropped.
pub struct ListingServer {
    path: PathBuf,
    waiting: Arc<(Mutex<Waiting>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
}

impl ListingServer {
    /// Listens at `path` and answers each question with a call of `list` made after it arrived
    /// (in the product, `ProcessMemoryProbe::list_compute` on the run's parent).
    pub fn start(
        path: &Path,
        mut list: impl FnMut() -> Result<Vec<DeviceProcess>, GpuError> + Send + 'static,
    ) -> Result<ListingServer, GpuError> {
        let listener = UnixListener::bind(path)
            .map_err(|e| GpuError::Nvml(format!("cannot listen at {}: {e}", path.display())))?;
        let waiting: Arc<(Mutex<Waiting>, Condvar)> = Arc::default();
        let lister = {
            let waiting = waiting.clone();
            std::thread::spawn(move || {
                loop {
                    let askers = {
                        let (lock, ready) = &*waiting;
                        let mut w = lock.lock().unwrap_or_else(|p| p.into_inner());
                        while w.askers.is_empty() && !w.stopping {
                            w = ready.wait(w).unwrap_or_else(|p| p.into_inner());
                        }
                        if w.stopping {
                            return;
                        }
                        std::mem::take(&mut w.askers)
                    };
                    // Begun after every one of these askers asked.
                    let answer = list().map_err(|e| e.to_string());
                    for asker in askers {
                        let _ = asker.send(answer.clone());
                    }
                }
            })
        };
        let acceptor = {
            let waiting = waiting.clone();
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if waiting.0.lock().unwrap_or_else(|p| p.into_inner()).stopping {
                        return;
                    }
                    let Ok(conn) = conn else { continue };
                    let waiting = waiting.clone();
                    // One thread a probe, ended by the probe closing its end.
                    std::thread::spawn(move || serve(conn, &waiting));
                }
            })
        };
        Ok(ListingServer {
            path: path.to_path_buf(),
            waiting,
            threads: vec![lister, acceptor],
        })
    }
}

/// Answers one probe's questions, one byte each, until it closes its end.
fn serve(mut conn: UnixStream, waiting: &(Mutex<Waiting>, Condvar)) {
    let mut byte = [0u8; 1];
    while conn.read_exact(&mut byte).is_ok() {
        let (tx, rx) = mpsc::sync_channel(1);
        {
            let (lock, ready) = waiting;
            let mut w = lock.lock().unwrap_or_else(|p| p.into_inner());
            if w.stopping {
                return;
            }
            w.askers.push(tx);
            ready.notify_one();
        }
        let Ok(answer) = rx.recv() else { return };
        if conn.write_all(&encode(&answer)).is_err() {
            return;
        }
    }
}

impl Drop for ListingServer {
    fn drop(&mut self) {
        {
            let (lock, ready) = &*self.waiting;
            lock.lock().unwrap_or_else(|p| p.into_inner()).stopping = true;
            ready.notify_all();
        }
        // Wakes the acceptor, which then sees `stopping`.
        let _ = UnixStream::connect(&self.path);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A probe's end: asks the run's parent for a listing begun after it asked.
pub struct ListingClient {
    path: PathBuf,
    conn: Mutex<UnixStream>,
}

impl ListingClient {
    /// Connects to the server listening at `path`.
    pub fn connect(path: &Path) -> Result<ListingClient, GpuError> {
        let conn = UnixStream::connect(path)
            .map_err(|e| GpuError::Nvml(format!("no listing server at {}: {e}", path.display())))?;
        Ok(ListingClient {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// The device's compute processes, listed after this call began.
    pub fn list(&self) -> Result<Vec<DeviceProcess>, GpuError> {
        let lost = |e: std::io::Error| GpuError::Nvml(format!("listing server at {}: {e}", self.path.display()));
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.write_all(b"?").map_err(lost)?;
        decode(&mut *conn).map_err(lost)?.map_err(GpuError::Nvml)
    }
}

/// An answer as bytes: `O`, the count (u32) and each process's pid (u32), whether it has a figure
/// (u8) and the figure (u64), little-endian; or `E`, the message's length (u32) and the message.
fn encode(answer: &Answer) -> Vec<u8> {
    let mut out = Vec::new();
    match answer {
        Ok(processes) => {
            out.push(b'O');
            out.extend_from_slice(&(processes.len() as u32).to_le_bytes());
            for p in processes {
                out.extend_from_slice(&p.pid.to_le_bytes());
                out.push(u8::from(p.used_bytes.is_some()));
                out.extend_from_slice(&p.used_bytes.unwrap_or(0).to_le_bytes());
            }
        }
        Err(message) => {
            out.push(b'E');
            out.extend_from_slice(&(message.len() as u32).to_le_bytes());
            out.extend_from_slice(message.as_bytes());
        }
    }
    out
}

/// Reads one answer that [`encode`] wrote.
fn decode(r: &mut impl Read) -> std::io::Result<Answer> {
    let mut kind = [0u8; 1];
    r.read_exact(&mut kind)?;
    let count = read_u32(r)? as usize;
    match kind[0] {
        b'O' => {
            let mut processes = Vec::with_capacity(count.min(4096));
            for _ in 0..count {
                let pid = read_u32(r)?;
                let mut entry = [0u8; 9];
                r.read_exact(&mut entry)?;
                let bytes = u64::from_le_bytes(entry[1..].try_into().expect("8 bytes"));
                processes.push(DeviceProcess {
                    pid,
                    used_bytes: (entry[0] == 1).then_some(bytes),
                });
            }
            Ok(Ok(processes))
        }
        b'E' => {
            let mut message = vec![0u8; count];
            r.read_exact(&mut message)?;
            Ok(Err(String::from_utf8_lossy(&message).into_owned()))
        }
        other => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("an answer that starts with byte {other}, neither O nor E"),
        )),
    }
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

#[cfg(test)]
mod tests;
