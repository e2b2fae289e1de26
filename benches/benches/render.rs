//! Rendering a report of 1,000 scenarios: placeholder until the report crate renders.
fn main() {}
