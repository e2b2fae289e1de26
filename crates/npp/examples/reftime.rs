//! Times the CPU side of a check at 8K (a scratch measurement, not part of the product).
fn main() {
    let p = nppbench_model::Primitive::CONVERT_8U32F_C1R;
    let g = nppbench_model::Geometry::new(p, 7680, 4320, 7680);
    let t = std::time::Instant::now();
    let src = nppbench_npp::source_buffers(p, &g);
    println!("sources {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let e = nppbench_npp::expected_output(p, &g, &src);
    println!("expected {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let c = nppbench_npp::compare(p, &g, &e, &e).unwrap();
    println!("compare {:?} {:?}", t.elapsed(), c.pixels_checked);
}
