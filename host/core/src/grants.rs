//! What a plugin is allowed: its memory, its time per call, how much a
//! reporter may write, and the hosts it may fetch from. The configuration
//! sets them, a bundle's manifest asks for them, the sandbox enforces them.

/// The limits and grants of one plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grants {
    /// Linear memory an instance may use, in bytes.
    pub memory: u64,
    /// Time one call may take.
    pub time: std::time::Duration,
    /// Bytes a reporter may write per task.
    pub output: u64,
    /// Bytes more a reporter may write for each URL and each reference of
    /// the task: a report grows with its task (0 when `output` is set).
    pub output_per_item: u64,
    /// Hosts the plugin may fetch from through the host (empty: no network).
    pub hosts: Vec<String>,
}

impl Default for Grants {
    fn default() -> Self {
        Grants {
            memory: 64 << 20,
            time: std::time::Duration::from_secs(1),
            output: 64 << 20,
            output_per_item: 1 << 10,
            hosts: Vec::new(),
        }
    }
}
