//! Delivery over SMTP with lettre: plain, STARTTLS or TLS, with optional
//! credentials whose password is read from the environment or a file.

use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{Message, SmtpTransport, Transport};
use spinneret_config::{MailSettings, TlsMode};
use spinneret_store::Mail;

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The server cannot be reached or dropped the connection: no message
    /// can be sent now.
    #[error("{0}")]
    Server(String),
    /// The server refused this message (its recipient, its size, …).
    #[error("{0}")]
    Message(String),
}

/// A connection to the configured SMTP server.
pub struct Sender {
    transport: SmtpTransport,
    from: lettre::message::Mailbox,
    server: String,
}

impl Sender {
    /// Check that the server answers (and accepts the login): a failure
    /// here is one error for the whole run.
    pub fn connect(settings: &MailSettings, from: &str) -> Result<Sender, SendError> {
        let server = format!(
            "{}:{} ({})",
            settings.server,
            settings.port,
            settings.tls.as_str()
        );
        let from = from.parse().map_err(|e| {
            SendError::Server(format!("the sender address `{from}` is not usable: {e}"))
        })?;
        let tls_error = |e: lettre::transport::smtp::Error| {
            SendError::Server(format!("mail server {server}: {e}"))
        };
        let builder = match settings.tls {
            TlsMode::None => SmtpTransport::builder_dangerous(&settings.server),
            TlsMode::StartTls => {
                SmtpTransport::starttls_relay(&settings.server).map_err(tls_error)?
            }
            TlsMode::Tls => SmtpTransport::relay(&settings.server).map_err(tls_error)?,
        };
        let mut builder = builder.port(settings.port).timeout(Some(settings.timeout));
        if let Some(user) = &settings.username {
            let password = match &settings.password {
                Some(p) => p
                    .read("SMTP password", "mail.password")
                    .map_err(SendError::Server)?,
                None => String::new(),
            };
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        let transport = builder.build();
        match transport.test_connection() {
            Ok(true) => Ok(Sender {
                transport,
                from,
                server,
            }),
            Ok(false) => Err(SendError::Server(format!(
                "mail server {server} did not answer; the messages are kept for the next run"
            ))),
            Err(e) => Err(SendError::Server(format!(
                "cannot reach the mail server {server}: {e}; the messages are kept for the next run"
            ))),
        }
    }

    /// Send one message.
    pub fn send(&self, mail: &Mail) -> Result<(), SendError> {
        let to = mail.recipient.parse().map_err(|e| {
            SendError::Message(format!("`{}` is not a usable address: {e}", mail.recipient))
        })?;
        // MIME-Version says how to read the quoted-printable body (a strict
        // reader shows it raw without); Message-ID lets a mail system and
        // a reader tell one run's message from another's.
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .message_id(None)
            .header(lettre::message::header::MIME_VERSION_1_0)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body.clone())
            .map_err(|e| SendError::Message(e.to_string()))?;
        self.transport.send(&message).map(|_| ()).map_err(|e| {
            if e.is_permanent() || e.is_transient() {
                SendError::Message(e.to_string())
            } else {
                SendError::Server(format!(
                    "mail server {} stopped answering: {e}; the messages left are kept for the next run",
                    self.server
                ))
            }
        })
    }
}
