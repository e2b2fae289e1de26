//! Prints the leak rule of every primitive of a run (a development aid).
fn main() {
    let path = std::env::args().nth(1).expect("RUN.json");
    let run = nppbench_model::RunFile::read(std::path::Path::new(&path)).unwrap();
    let a = nppbench_analysis::RunAnalysis::new(&run);
    let t = std::time::Instant::now();
    for r in a.rules() {
        println!("{:?}", r);
    }
    eprintln!("{:?}", t.elapsed());
}
