//! The machine's single-precision matrix-multiply rate: `gemm` (the crate `ant`'s CPU
//! kernels use) on 2048 x 2048 x 2048, best of 10, on `RAYON_NUM_THREADS` threads
//! (default 2). Prints GFLOP/s: the yardstick of `scripts/epoch_rate.sh` (issue 42).
//!
//!     cargo run --release --example gemm_rate
fn main() {
    let n = 2048;
    let threads: usize = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.1).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.1).collect();
    let mut c = vec![0f32; n * n];
    let parallelism = match threads {
        1 => gemm::Parallelism::None,
        t => gemm::Parallelism::Rayon(t),
    };
    let mut best = f64::INFINITY;
    for _ in 0..10 {
        let t = std::time::Instant::now();
        // SAFETY: three row-major n x n matrices, each exactly n * n long; `c` is
        // borrowed mutably and aliases neither operand.
        unsafe {
            gemm::gemm(
                n,
                n,
                n,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                n as isize,
                b.as_ptr(),
                1,
                n as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&c);
    println!("{:.1}", 2.0 * (n as f64).powi(3) / best / 1e9);
}
