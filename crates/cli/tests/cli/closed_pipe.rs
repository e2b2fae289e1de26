//! A command that only prints, its reader gone (`nppbench primitives | head -1`): it ends by
//! SIGPIPE, as C tools do, never by a panic saying "failed printing to stdout".

use std::os::unix::process::ExitStatusExt;

use super::command;

fn into_a_closed_pipe(args: &[&str]) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = command(args).stdout(writer).output().unwrap();
    (o.status, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn printing_commands_end_by_sigpipe_when_their_reader_is_gone() {
    for args in [&["primitives"][..], &["preset", "quick"]] {
        let (status, err) = into_a_closed_pipe(args);
        assert_eq!(status.signal(), Some(13), "{args:?}: {status:?}, {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
