//! The outbox: messages to owners, kept until the mail server has taken
//! them, so that a mail failure loses nothing and is retried at the next run.

use super::{Store, StoreError};
use crate::db::{TxMode, params};
use spinneret_core::model::unix_now;

/// A message to an owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// The task it reports on.
    pub task: String,
    /// The owner's address.
    pub recipient: String,
    /// Its subject line.
    pub subject: String,
    /// Its plain-text body.
    pub body: String,
}

/// A message waiting in the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedMail {
    /// Its id in the outbox.
    pub id: i64,
    /// The run that wrote it.
    pub run: i64,
    /// The message.
    pub mail: Mail,
    /// Times sending it failed.
    pub attempts: u32,
}

impl Store {
    /// Put `mail` of `run` in the outbox.
    pub fn queue_mail(&self, run: i64, mail: &Mail) -> Result<i64, StoreError> {
        self.conn.query_row(
            "INSERT INTO outbox (run_id, task, recipient, subject, body, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             RETURNING id",
            params![
                run,
                mail.task,
                mail.recipient,
                mail.subject,
                mail.body,
                unix_now()
            ],
            |r| r.get(0),
        )
    }

    /// Put this run's messages in the outbox and mark the run `finished`,
    /// in one transaction: a process killed on the way leaves either both
    /// undone (`--resume` writes the messages) or both done (it does not
    /// write them twice).
    pub fn queue_mail_and_finish(&self, run: i64, mails: &[Mail]) -> Result<(), StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        for mail in mails {
            self.queue_mail(run, mail)?;
        }
        tx.execute(
            "UPDATE runs SET status = 'finished', finished_at = ?2 WHERE id = ?1",
            params![run, unix_now()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Every message waiting, oldest first.
    pub fn queued_mail(&self) -> Result<Vec<QueuedMail>, StoreError> {
        Ok(self.conn.query_vec("SELECT id, run_id, task, recipient, subject, body, attempts FROM outbox ORDER BY id", params![], |r| {
            Ok(QueuedMail {
                id: r.get(0)?,
                run: r.get(1)?,
                mail: Mail {
                    task: r.get(2)?,
                    recipient: r.get(3)?,
                    subject: r.get(4)?,
                    body: r.get(5)?,
                },
                attempts: r.get(6)?,
            })
        })?.into_iter().collect())
    }

    /// The mail server took message `id`: it leaves the outbox.
    pub fn mail_sent(&self, id: i64) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM outbox WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// Sending message `id` failed with `error`; it stays for the next run.
    pub fn mail_failed(&self, id: i64, error: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE outbox SET attempts = attempts + 1, last_error = ?2 WHERE id = ?1",
            params![id, error],
        )?;
        Ok(())
    }
}
