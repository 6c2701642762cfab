//! Allocator settings for training speed.
//!
//! burn's CPU backend allocates and frees large temporary buffers (im2col matrices,
//! activations, gradients) at every step. glibc serves each allocation above its mmap
//! threshold with a fresh `mmap`, so every step pays page faults and kernel zeroing for
//! memory it just returned. Keeping such buffers in the heap lets the next step reuse
//! them, at the cost of a higher peak memory (`docs/guide/benchmarks.md` has the
//! measured effect).

/// Keep freed large buffers for reuse (glibc on Linux; elsewhere, and with
/// `ANT_MALLOC=system`, nothing changes). Returns whether the settings were applied.
/// Call it once, early: the binary and the benchmarks do.
pub fn keep_large_buffers() -> bool {
    if crate::env::malloc_is_system() {
        return false;
    }
    crate::os::keep_freed_buffers()
}

#[cfg(test)]
mod tests {
    #[test]
    fn settings_apply_on_glibc() {
        let applied = super::keep_large_buffers();
        assert_eq!(applied, cfg!(all(target_os = "linux", target_env = "gnu")));
    }
}
