//! The `spinneret` binary.

/// mimalloc: the crawl allocates many small, short-lived buffers across
/// threads. Built with the `no_thp` feature (it does not ask for
/// transparent huge pages) and told to give freed memory back soon (see
/// [`main`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e` of the
/// mimalloc 3 that libmimalloc-sys builds (the crate has no name for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps freed memory before giving it back to the
/// system, in milliseconds. Its default, a second, kept a large page's
/// transients (its body, its parse, its store record: tens of MiB, freed
/// within the second they were made) resident beside what came after: the
/// 200,000-link page of the benchmark peaked at 200-225 MiB with it and at
/// about 140 MiB with 10 ms, at the same speed.
const PURGE_DELAY_MS: std::ffi::c_long = 10;

fn main() -> std::process::ExitCode {
    // SAFETY: `mi_option_set_default` only stores an option's value, unless
    // the environment set it (`MIMALLOC_PURGE_DELAY` has the last word);
    // mimalloc reads it when it next decides whether to purge.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
    }
    // No transparent huge pages for this process: a huge page counts whole
    // in the resident set however little of it is in use, and on a kernel
    // that gives them to every process (`always`) the `no_thp` build alone
    // does not keep them away.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integers only and changes nothing
    // but this process's huge-page policy; a kernel without it says EINVAL,
    // which leaves things as they were.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    spinneret::cli::main()
}

#[cfg(test)]
mod tests {
    /// `MI_OPTION_PURGE_DELAY` is the option's place in mimalloc 3's list:
    /// another major version may number its options otherwise.
    #[test]
    fn the_purge_delay_is_numbered_for_the_mimalloc_built() {
        #[allow(unsafe_code)]
        // SAFETY: `mi_version` reads a constant.
        let version = unsafe { libmimalloc_sys::mi_version() };
        assert_eq!(
            version / 10_000,
            3,
            "mimalloc {version}: check MI_OPTION_PURGE_DELAY against its mi_option_e"
        );
    }
}
