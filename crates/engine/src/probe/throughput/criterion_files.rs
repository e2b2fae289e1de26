//! Criterion's `estimates.json` and `sample.json`, as much of them as nppbench reads.
//!
//! Criterion's statistics module is private, so its results are read back from the files it
//! writes for each benchmark.

use std::path::Path;

use nppbench_model::{Estimate, FailureKind, KernelTiming};
use serde::Deserialize;

use crate::error::ProbeError;

#[derive(Deserialize)]
struct CriterionEstimates {
    mean: CriterionEstimate,
    median: CriterionEstimate,
    median_abs_dev: CriterionEstimate,
    std_dev: CriterionEstimate,
    slope: Option<CriterionEstimate>,
}

#[derive(Deserialize)]
struct CriterionEstimate {
    confidence_interval: CriterionInterval,
    point_estimate: f64,
    standard_error: f64,
}

#[derive(Deserialize)]
struct CriterionInterval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct CriterionSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

impl From<CriterionEstimate> for Estimate {
    fn from(e: CriterionEstimate) -> Estimate {
        Estimate {
            point_ns: e.point_estimate,
            lower_ns: e.confidence_interval.lower_bound,
            upper_ns: e.confidence_interval.upper_bound,
            standard_error_ns: e.standard_error,
            confidence_level: e.confidence_interval.confidence_level,
        }
    }
}

fn unreadable(message: String) -> ProbeError {
    ProbeError::new(FailureKind::Other, message)
}

/// Reads what criterion saved for benchmark `name` under `dir`.
pub(crate) fn read(dir: &Path, name: &str) -> Result<KernelTiming, ProbeError> {
    let base = dir.join(name).join("new");
    let read = |file: &str| {
        let path = base.join(file);
        std::fs::read_to_string(&path).map_err(|e| unreadable(format!("criterion wrote no {}: {e}", path.display())))
    };
    let parse_error = |file: &str, e: serde_json::Error| unreadable(format!("criterion's {file}: {e}"));
    let est: CriterionEstimates =
        serde_json::from_str(&read("estimates.json")?).map_err(|e| parse_error("estimates.json", e))?;
    let sample: CriterionSample =
        serde_json::from_str(&read("sample.json")?).map_err(|e| parse_error("sample.json", e))?;
    Ok(KernelTiming {
        mean: est.mean.into(),
        median: est.median.into(),
        median_abs_dev: est.median_abs_dev.into(),
        std_dev: est.std_dev.into(),
        slope: est.slope.map(Into::into),
        sample_iters: sample.iters,
        sample_times_ns: sample.times,
    })
}
