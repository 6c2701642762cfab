//! The operating-system calls ant makes through libc (glibc on Linux; elsewhere each
//! falls back to what std offers, or does nothing). With `ops::libtorch` and the gemm
//! call of `ops::cpu_conv`, the only `unsafe` code of the crate.

use std::path::Path;

/// Swaps the names of `a` and `b` in one step (`renameat2` with `RENAME_EXCHANGE`);
/// `None` where the system or file system has no such call.
pub(crate) fn rename_exchange(a: &Path, b: &Path) -> Option<std::io::Result<()>> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes());
        let (ca, cb) = match (c(a), c(b)) {
            (Ok(ca), Ok(cb)) => (ca, cb),
            (Err(e), _) | (_, Err(e)) => return Some(Err(e.into())),
        };
        // SAFETY: two valid NUL-terminated paths; renameat2 only renames them.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if rc == 0 {
            return Some(Ok(()));
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP) => None,
            _ => Some(Err(e)),
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (a, b);
        None
    }
}

/// Whether descriptor 1 was closed when the process started (`ant ... >&-`), recorded
/// by [`RECORD_STDOUT`] before Rust's runtime opens `/dev/null` in its place, after which
/// a closed stdout would look like `>/dev/null`.
static STDOUT_CLOSED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
/// The same for descriptor 0 (`predict --input - <&-` read Rust's `/dev/null`).
static STDIN_CLOSED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn record_stdout() {
    use std::sync::atomic::Ordering::Relaxed;
    // SAFETY: F_GETFD only reads the descriptor's flags; it fails on a closed one.
    let closed = |fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
    STDOUT_CLOSED_AT_START.store(closed(libc::STDOUT_FILENO), Relaxed);
    STDIN_CLOSED_AT_START.store(closed(libc::STDIN_FILENO), Relaxed);
}

/// Whether standard input was closed when the process started (`<&-`).
pub(crate) fn stdin_closed() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    std::hint::black_box(RECORD_STDOUT);
    STDIN_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed)
}

/// The loader runs the functions of `.init_array` before `main`, hence before Rust's
/// runtime sanitises the standard descriptors.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
// SAFETY: `.init_array` holds pointers to functions of no arguments, which this is.
#[unsafe(link_section = ".init_array")]
static RECORD_STDOUT: extern "C" fn() = record_stdout;

/// Whether stdout is open for writing: Rust's stdout swallows `EBADF`, so output to
/// a closed stdout, or to one opened for reading (`1<file`), would vanish with success.
pub(crate) fn stdout_writable() -> std::io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // Naming the hook links it into every binary that checks stdout.
        std::hint::black_box(RECORD_STDOUT);
        if STDOUT_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(std::io::Error::other("closed"));
        }
    }
    #[cfg(unix)]
    {
        // SAFETY: F_GETFL only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFL) };
        if flags == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if flags & libc::O_ACCMODE == libc::O_RDONLY {
            return Err(std::io::Error::other("open only for reading"));
        }
    }
    Ok(())
}

/// Whether process `pid` has ended and waits to be reaped (state `Z` in /proc).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn is_zombie(pid: libc::pid_t) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `PID (COMM) STATE ...`, COMM being any bytes: the state follows the last ')'.
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// Whether process `pid` is running (where that cannot be known: assumed not).
pub(crate) fn process_alive(pid: u32) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let rc = unsafe { libc::kill(pid, 0) };
        let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        // A killed process its parent has not reaped yet (a zombie) writes nothing more:
        // what it left is stale (after `kill -9` of a web export, the next export must
        // not keep its staging folder).
        exists && !is_zombie(pid)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = pid;
        false
    }
}

/// Let a write beyond the file size limit (`ulimit -f`) fail with `EFBIG` instead of
/// killing the process with `SIGXFSZ`, so that it is reported like any failed write.
pub fn file_size_limit_is_an_error() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: ignoring a signal changes only its disposition; no handler runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Ends the process with exit code 2 and one `error:` line where it would abort
/// (SIGABRT). Rust aborts when an allocation fails, after a line saying how many bytes:
/// under an address-space limit (`ulimit -v`), in a full machine or control group, the
/// memory ant may use ran out. Sizes that grow with the data or an option are checked
/// before they are allocated; this is the net under the rest. What was saved is kept
/// (files are written atomically; a run's checkpoints resume).
pub fn out_of_memory_is_an_error() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: installs a handler that calls only write(2) and _exit(2), both
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGABRT, on_abort as *const () as libc::sighandler_t);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn on_abort(_: libc::c_int) {
    const LINE: &[u8] = b"error: out of memory: an allocation failed (above) beyond what this process may use (ulimit -v, the machine's memory or its control group's memory.max); what was saved is kept\n";
    // SAFETY: writes a static buffer to stderr and ends the process.
    unsafe {
        libc::write(2, LINE.as_ptr().cast(), LINE.len());
        libc::_exit(2);
    }
}

/// Ends this process at once, as a power cut would (the crash tests' fault injection).
pub(crate) fn kill_self() -> ! {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sends a signal to this process; SIGKILL cannot be caught.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}

/// glibc's allocator keeps freed large buffers in the heap (see `malloc.rs`); whether
/// the settings applied.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn keep_freed_buffers() -> bool {
    // SAFETY: mallopt only changes allocator parameters; it is safe to call at any time.
    unsafe {
        // Serve every allocation from the heap instead of fresh mappings...
        let a = libc::mallopt(libc::M_MMAP_MAX, 0);
        // ...and do not hand freed memory back to the kernel at every free.
        let b = libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        // Under an address-space limit, one arena: each thread's own would reserve 64
        // MiB mappings, and near the limit glibc retries them at every allocation (a
        // million failed mmap calls, ten seconds of system time for an eval).
        if address_space_left().is_some() {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
        a == 1 && b == 1
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn keep_freed_buffers() -> bool {
    false
}

/// The most memory this process can have, and what sets it.
pub(crate) fn memory_limit() -> Option<(u64, &'static str)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut limits = Vec::new();
        if let Some(left) = address_space_left() {
            limits.push((left, "this process may still map (ulimit -v)"));
        }
        // SAFETY: sysinfo fills the zeroed struct.
        let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
        if unsafe { libc::sysinfo(&mut si) } == 0 {
            let unit = u64::from(si.mem_unit.max(1));
            let total = si.totalram.saturating_add(si.totalswap);
            limits.push((
                total.saturating_mul(unit),
                "of memory and swap this machine has",
            ));
        }
        if let Some(left) = cgroup_memory_left() {
            limits.push((
                left,
                "this process's control group may still use (memory.max)",
            ));
        }
        limits.into_iter().min_by_key(|(l, _)| *l)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// What this process may still map under its address-space limit (`ulimit -v`):
/// `None` without one.
pub(crate) fn address_space_left() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the limit into `rl`.
        let limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0
            && rl.rlim_cur != libc::RLIM_INFINITY;
        if !limited {
            return None;
        }
        // What the process has mapped already (its first field, in pages).
        let used = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            // SAFETY: sysconf only reads a system setting.
            .saturating_mul(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64);
        Some(rl.rlim_cur.saturating_sub(used))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// The memory this machine has (RAM, not swap), or its control group's `memory.max`
/// where that is less: fixed while a run lasts and when it resumes, unlike what is free.
pub(crate) fn memory_size() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: sysinfo fills the zeroed struct.
        let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
        let ram = (unsafe { libc::sysinfo(&mut si) } == 0)
            .then(|| u64::from(si.mem_unit.max(1)).saturating_mul(si.totalram));
        let cgroup = cgroup_memory_file("memory.max");
        [ram, cgroup].into_iter().flatten().min()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// A number in this process's control group (v2) file `name`; `None` where there is none
/// (or it says "max").
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn cgroup_memory_file(name: &str) -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    std::fs::read_to_string(dir.join(name))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// What the cgroup (v2) of this process may still use: `memory.max` less
/// `memory.current`; `None` without a limit.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn cgroup_memory_left() -> Option<u64> {
    let max = cgroup_memory_file("memory.max")?;
    let current = cgroup_memory_file("memory.current").unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// Refuses an allocation of `bytes` that a user's flag or file asks for (`what` says
/// which, e.g. "--width 40000: a 40000 x 22400 picture") when it would not fit in the
/// memory this process may have: one error, before anything is allocated.
pub(crate) fn check_fits(bytes: u64, what: &str) -> crate::error::Result<()> {
    match over_limit(bytes, what) {
        Some(msg) => Err(crate::error::AntError::param(msg)),
        None => Ok(()),
    }
}

/// [`check_fits`] for what reading the file `path` needs: the error names the file.
pub(crate) fn check_file_fits(bytes: u64, path: &Path, what: &str) -> crate::error::Result<()> {
    match over_limit(bytes, what) {
        Some(msg) => Err(crate::error::AntError::data(path, msg)),
        None => Ok(()),
    }
}

/// What to say when `bytes` for `what` do not fit in the memory this process may have.
fn over_limit(bytes: u64, what: &str) -> Option<String> {
    let (limit, whose) = memory_limit()?;
    let mib = |b: u64| b / (1 << 20);
    (bytes > limit).then(|| {
        format!(
            "{what} needs about {} MiB, more than the {} MiB {whose}",
            mib(bytes),
            mib(limit)
        )
    })
}

/// `path` opened to read, never to wait: a regular file is opened non-blocking, so a
/// kernel file that looks like one but waits for data (`/proc/kmsg`) answers at once
/// with an error that [`waits_error`] words (a true regular file reads as ever).
/// Pipes and other streams open as before: their writer ends them.
pub(crate) fn open_to_read(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        use std::os::unix::fs::OpenOptionsExt;
        return std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(waits_error);
    }
    #[cfg(unix)]
    if is_named_pipe(path) {
        // Opening it waits for a program to open it for writing: said, not silent.
        tracing::warn!(
            "{}: a named pipe: waiting for a program to write to it",
            path.display()
        );
    }
    std::fs::File::open(path)
}

/// Whether `path` is a named pipe (`mkfifo`), not a pipe a shell made for one command
/// (`<(cat x.csv)`, `/dev/fd/63`, `/dev/stdin`), whose writer is already there.
#[cfg(unix)]
fn is_named_pipe(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let shell_made = ["/dev/", "/proc/"].iter().any(|p| path.starts_with(p));
    !shell_made && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// A read of a file from [`open_to_read`] that would have waited, said as such.
pub(crate) fn waits_error(e: std::io::Error) -> std::io::Error {
    match e.kind() {
        std::io::ErrorKind::WouldBlock => std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "waits for data that may never come (a kernel or device file, not a data file)",
        ),
        _ => e,
    }
}

/// `std::fs::read` through [`open_to_read`].
pub(crate) fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = vec![];
    open_to_read(path)?
        .read_to_end(&mut bytes)
        .map_err(waits_error)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    /// A running process is alive; one that ended and is not yet reaped is not.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_zombie_is_not_alive() {
        assert!(super::process_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while super::process_alive(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!super::process_alive(pid), "an ended child is not alive");
        child.wait().unwrap();
    }
}
