//! The process's open-file limit, raised once at start by both executables of this
//! package (`ferry` and `ferry-perf`).

/// Raises this process's open-file limit to its hard limit: a queue manager's client
/// sockets take a file handle each and every 8 MiB segment of a queue file two (the
/// filer's, and the reader of bodies left on disk), and the harness opens a socket per
/// client (an embedded queue manager inherits the limit too), so both outgrow the usual
/// soft limit of 1024 long before the hard one.
pub fn raise_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
