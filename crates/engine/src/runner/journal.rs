//! The journal: every finished scenario appended as it finishes, so that an interrupted run
//! keeps what it measured and `--resume` continues from it.

use std::io::Write;
use std::path::{Path, PathBuf};

use nppbench_model::{Environment, Matrix, MemoryRecord, OrderingRounds, ThroughputRecord};
use serde::{Deserialize, Serialize};

use super::{RunError, io_error};

/// One line of the journal: a header, then one line per finished scenario.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum JournalEntry {
    Header {
        started_at: String,
        command: Vec<String>,
        environment: Box<Environment>,
        matrix: Box<Matrix>,
    },
    Memory(Box<MemoryRecord>),
    Throughput(Box<ThroughputRecord>),
    /// A memory scenario's ordering rounds, made after its memory record's line.
    Ordering {
        id: String,
        rounds: Box<OrderingRounds>,
    },
}

pub(super) struct Journal {
    file: std::fs::File,
    path: PathBuf,
}

impl Journal {
    /// Opens the journal at `path`: appended to when resuming, else started anew.
    pub(super) fn open(path: PathBuf, resume: bool) -> Result<Journal, RunError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(resume)
            .write(true)
            .truncate(!resume)
            .open(&path)
            .map_err(io_error("opening journal", &path))?;
        Ok(Journal { file, path })
    }

    pub(super) fn append(&mut self, entry: &JournalEntry) -> Result<(), RunError> {
        let line = serde_json::to_string(entry).expect("journal entries serialise");
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(io_error("appending to journal", &self.path))
    }
}

/// What an interrupted run had finished, read back from its journal.
pub(super) struct Resumed {
    pub(super) started_at: String,
    pub(super) environment: Environment,
    pub(super) matrix: Matrix,
    pub(super) memory: Vec<MemoryRecord>,
    pub(super) throughput: Vec<ThroughputRecord>,
}

pub(super) fn read(path: &Path) -> Result<Resumed, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        RunError::Input(format!(
            "cannot resume: {} ({e}); --resume continues a run that was interrupted, in the same --out folder",
            path.display()
        ))
    })?;
    let mut lines = text.lines();
    let header = lines.next().and_then(|l| serde_json::from_str::<JournalEntry>(l).ok());
    let Some(JournalEntry::Header {
        started_at,
        environment,
        matrix,
        ..
    }) = header
    else {
        return Err(RunError::Input(format!(
            "cannot resume: {} has no header line",
            path.display()
        )));
    };
    let mut resumed = Resumed {
        started_at,
        environment: *environment,
        matrix: *matrix,
        memory: Vec::new(),
        throughput: Vec::new(),
    };
    // A line cut short by the interruption is the last one; it and anything after is dropped.
    for entry in lines.map_while(|l| serde_json::from_str::<JournalEntry>(l).ok()) {
        match entry {
            JournalEntry::Memory(r) => resumed.memory.push(*r),
            JournalEntry::Throughput(r) => resumed.throughput.push(*r),
            JournalEntry::Ordering { id, rounds } => {
                let measured = resumed.memory.iter_mut().rev().find(|r| r.scenario.id == id);
                if let Some(result) = measured.and_then(|r| r.result.as_mut()) {
                    result.ordering = Some(*rounds);
                }
            }
            JournalEntry::Header { .. } => {}
        }
    }
    Ok(resumed)
}
