//! placeholder
use std::path::{Path, PathBuf};
pub fn render_to_dir(_runs: &[nppbench_model::RunFile], out: &Path) -> Result<PathBuf, std::io::Error> { Ok(out.join("index.html")) }
