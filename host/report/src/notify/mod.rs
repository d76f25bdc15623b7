//! Owners are told (seed 000, section 5.1): at the end of a run, one
//! message per task whose owner asked for it (`email_broken`,
//! `email_moved`, `email_changed`, `email_expired`) and that has something
//! to report, listing each interesting item with the document referring to
//! it and a link to its row in the task's maintenance index.
//!
//! Messages go to the store's outbox first and leave it when the SMTP
//! server has taken them, so a mail failure loses nothing: the message is
//! sent at the next run. An unreachable server is reported once per run.
//!
//! Why not a plugin world: delivering needs sockets and credentials, which
//! the sandbox never gives a plugin, and a plugin that wants to tell
//! someone through an HTTP service can already do so as a reporter with a
//! network grant (it is told every finding).

mod compose;
mod smtp;

pub use compose::compose;
pub use smtp::{SendError, Sender};

use spinneret_config::Config;
use spinneret_store::{FindingRow, Mail, Store};
use std::collections::BTreeMap;

/// A message the server refuses (not the server being away) is tried at
/// this many runs, then dropped with an error.
pub const GIVE_UP_AFTER: u32 = 5;

/// What the notification stage did.
#[derive(Debug, Default)]
pub struct MailReport {
    /// Messages written this run.
    pub composed: usize,
    /// Messages the server took (this run's and earlier ones').
    pub sent: usize,
    /// Messages left in the outbox for the next run.
    pub kept: usize,
    /// What went wrong, once per cause.
    pub errors: Vec<String>,
}

/// This run's messages: one per task whose owner asked for something the
/// run found, in task order.
pub fn messages(config: &Config, store: &Store, run: i64) -> anyhow::Result<Vec<Mail>> {
    let info = store.run_info(run)?;
    let mut by_task: BTreeMap<String, Vec<FindingRow>> = BTreeMap::new();
    for f in store.findings(run, None)? {
        by_task.entry(f.task.clone()).or_default().push(f);
    }
    Ok(config
        .tasks
        .iter()
        .filter_map(|task| {
            let findings = by_task.get(&task.name).map(Vec::as_slice).unwrap_or(&[]);
            compose(task, info.started_at, findings)
        })
        .collect())
}

/// Compose this run's messages, queue them in the outbox and mark the run
/// finished (together: see [`Store::queue_mail_and_finish`]).
pub fn queue(config: &Config, store: &Store, run: i64) -> anyhow::Result<usize> {
    let mails = messages(config, store, run)?;
    // The run is finished with its messages queued, never one without the other.
    store.queue_mail_and_finish(run, &mails)?;
    Ok(mails.len())
}

/// Print this run's messages instead of sending them (`--dry-run-mail`).
pub fn print(
    config: &Config,
    store: &Store,
    run: i64,
    out: &mut impl std::io::Write,
) -> anyhow::Result<usize> {
    let from = sender(config);
    let mails = messages(config, store, run)?;
    for mail in &mails {
        writeln!(
            out,
            "From: {from}\nTo: {}\nSubject: {}\n\n{}\n",
            mail.recipient, mail.subject, mail.body
        )?;
    }
    Ok(mails.len())
}

/// The sender address: `[mail] from`, else the crawl's `from`, else
/// `spinneret@localhost`.
pub fn sender(config: &Config) -> String {
    let s = &config.settings;
    s.mail
        .from
        .clone()
        .or_else(|| s.from.clone())
        .unwrap_or_else(|| "spinneret@localhost".into())
}

/// Send everything in the outbox, oldest first. A server that cannot be
/// reached (or refuses the login) stops the round at its first message:
/// one error for the run, every message kept.
pub fn deliver(config: &Config, store: &Store) -> anyhow::Result<MailReport> {
    let mut report = MailReport::default();
    let queued = store.queued_mail()?;
    if queued.is_empty() {
        return Ok(report);
    }
    let sender = match Sender::connect(&config.settings.mail, &sender(config)) {
        Ok(s) => s,
        Err(e) => {
            for q in &queued {
                store.mail_failed(q.id, &e.to_string())?;
            }
            report.kept = queued.len();
            report.errors.push(e.to_string());
            return Ok(report);
        }
    };
    for (i, q) in queued.iter().enumerate() {
        match sender.send(&q.mail) {
            Ok(()) => {
                store.mail_sent(q.id)?;
                report.sent += 1;
            }
            Err(SendError::Server(e)) => {
                // The server is gone: keep this and every later message.
                for rest in &queued[i..] {
                    store.mail_failed(rest.id, &e)?;
                }
                report.kept += queued.len() - i;
                report.errors.push(e);
                break;
            }
            Err(SendError::Message(e)) if q.attempts + 1 >= GIVE_UP_AFTER => {
                store.mail_sent(q.id)?;
                report.errors.push(format!(
                    "the message to {} for task {} was refused {GIVE_UP_AFTER} times and is dropped: {e}",
                    q.mail.recipient, q.mail.task
                ));
            }
            Err(SendError::Message(e)) => {
                let e = format!(
                    "the message to {} for task {} was refused: {e}",
                    q.mail.recipient, q.mail.task
                );
                store.mail_failed(q.id, &e)?;
                report.kept += 1;
                report.errors.push(e);
            }
        }
    }
    Ok(report)
}
