//! Every environment variable `ant` reads, read here and nowhere else.
//!
//! | variable | values | what it does | read by |
//! |---|---|---|---|
//! | `RUST_LOG` | a `tracing` filter (`ant=info`) | what the command line logs on stderr (default `error,ant=warn`) | the `ant` binary |
//! | `ANT_MALLOC` | `system` | keeps glibc's own allocator settings (no reuse of large freed buffers) | [`crate::keep_large_buffers`] |
//! | `ANT_GROWTH_CACHE_MB` | a whole number of MiB | what growth may cache at a leaf (`0`: run the frozen tree on every batch); default a quarter of the machine's memory | growth |
//! | `ANT_CONV_LAYOUT` | `grid`, `exact`, `rows` | forces how a convolution is unrolled on the CPU (to compare; default: chosen per shape) | CPU convolutions |
//! | `ANT_CONV_POOL` | `separate` | runs a convolution and its 2x2 max-pooling as two ops (to compare; default fused) | convolutions |
//! | `ANT_CONV_BACKWARD` | `burn` | keeps burn-tch's backward pass of a convolution (to compare; default fused) | LibTorch convolutions |
//! | `ANT_FAULT_AFTER_WRITES` | N | tests: kills the process right after the N-th durable step of the file store | the file store |
//! | `ANT_FAULT_FAIL_WRITE` | N | tests: the N-th file write fails as on a full disk | the file store |
//! | `ANT_TEST_CUDA` | set | tests: the unit tests that compare devices also run on CUDA | unit tests of `ops` and `train` |
//!
//! A value that is not one of those listed is the default, but for
//! `ANT_GROWTH_CACHE_MB`, which is refused (see [`growth_cache_mb`]).

use std::env::VarError;

/// `RUST_LOG`, or empty.
pub fn rust_log() -> String {
    std::env::var("RUST_LOG").unwrap_or_default()
}

/// Whether `ANT_MALLOC=system` turns the allocator settings off.
pub fn malloc_is_system() -> bool {
    std::env::var("ANT_MALLOC").is_ok_and(|v| v == "system")
}

/// The name of growth's cache budget variable, for messages.
pub const GROWTH_CACHE_MB: &str = "ANT_GROWTH_CACHE_MB";

/// `ANT_GROWTH_CACHE_MB` as given: `Ok(None)` when unset, `Err` with the text (made
/// lossless where it can be) when it is not Unicode.
pub fn growth_cache_mb() -> Result<Option<String>, String> {
    match std::env::var(GROWTH_CACHE_MB) {
        Ok(v) => Ok(Some(v)),
        Err(VarError::NotPresent) => Ok(None),
        Err(VarError::NotUnicode(v)) => Err(v.to_string_lossy().into_owned()),
    }
}

/// `ANT_CONV_LAYOUT`, when set and Unicode.
pub fn conv_layout() -> Option<String> {
    std::env::var("ANT_CONV_LAYOUT").ok()
}

/// Whether `ANT_CONV_POOL=separate`.
pub fn conv_pool_separate() -> bool {
    std::env::var("ANT_CONV_POOL").is_ok_and(|v| v == "separate")
}

/// Whether `ANT_CONV_BACKWARD=burn`.
pub fn conv_backward_burn() -> bool {
    std::env::var("ANT_CONV_BACKWARD").is_ok_and(|v| v == "burn")
}

/// `ANT_FAULT_AFTER_WRITES` as a number, when it is one.
pub fn fault_after_writes() -> Option<usize> {
    std::env::var("ANT_FAULT_AFTER_WRITES").ok()?.parse().ok()
}

/// `ANT_FAULT_FAIL_WRITE` as a number, when it is one.
pub fn fault_fail_write() -> Option<usize> {
    std::env::var("ANT_FAULT_FAIL_WRITE").ok()?.parse().ok()
}

/// Whether `ANT_TEST_CUDA` is set (to anything).
pub fn test_cuda() -> bool {
    std::env::var_os("ANT_TEST_CUDA").is_some()
}
