//! How owners are mailed: the SMTP server, its TLS mode and credentials,
//! and what an e-mail address must look like ([`check_email`]). The
//! password is never part of the configuration itself: it comes from an
//! environment variable or a file (`password.rs`). The `[mail]` table is
//! read here too ([`mail_settings`]), as `[library]` is in `library.rs`.

use super::password::{Password, password_source};
use serde::Deserialize;
use serde_spanned::Spanned;
use spinneret_core::values::{Bounded, DurationIn, ms};
use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

/// How the connection to the SMTP server is protected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsMode {
    /// Plain SMTP (a local mail server on port 25).
    #[default]
    None,
    /// Plain SMTP upgraded with STARTTLS, which the server must offer (port 587).
    StartTls,
    /// TLS from the first byte (SMTPS, port 465).
    Tls,
}

impl TlsMode {
    /// The configuration's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMode::None => "none",
            TlsMode::StartTls => "starttls",
            TlsMode::Tls => "tls",
        }
    }

    /// Parse the configuration's name.
    pub fn from_name(s: &str) -> Option<TlsMode> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Some(TlsMode::None),
            "starttls" => Some(TlsMode::StartTls),
            "tls" => Some(TlsMode::Tls),
            _ => None,
        }
    }

    /// The port used when the configuration names none.
    pub fn default_port(self) -> u16 {
        match self {
            TlsMode::None => 25,
            TlsMode::StartTls => 587,
            TlsMode::Tls => 465,
        }
    }
}

/// The `[mail]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailSettings {
    /// The SMTP server's host name or address.
    pub server: String,
    /// Its port (default by TLS mode: 25, 587 or 465).
    pub port: u16,
    /// How the connection is protected.
    pub tls: TlsMode,
    /// The user name to authenticate as (none: no authentication).
    pub username: Option<String>,
    /// Where the password comes from.
    pub password: Option<Password>,
    /// The sender address (default: the crawl's `from`, else `spinneret@localhost`).
    pub from: Option<String>,
    /// Time allowed for connecting and each SMTP command.
    pub timeout: Duration,
}

impl Default for MailSettings {
    fn default() -> Self {
        MailSettings {
            server: "localhost".into(),
            port: TlsMode::None.default_port(),
            tls: TlsMode::None,
            username: None,
            password: None,
            from: None,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The `[mail]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMail {
    server: Option<String>,
    port: Option<Bounded<1, 65535>>,
    tls: Option<Spanned<String>>,
    username: Option<String>,
    password: Option<Spanned<toml::Value>>,
    password_env: Option<String>,
    password_file: Option<String>,
    from: Option<Spanned<String>>,
    timeout: Option<DurationIn<{ ms::SECOND }, { 10 * ms::MINUTE }>>,
}

/// The `[mail]` table; the password only by reference.
pub(super) fn mail_settings(
    raw: Spanned<RawMail>,
    rel: &dyn Fn(&str) -> PathBuf,
) -> Result<MailSettings, (Option<Range<usize>>, String)> {
    let span = raw.span();
    let m = raw.into_inner();
    let defaults = MailSettings::default();
    let password = password_source(
        "the SMTP password",
        "",
        m.password.as_ref(),
        m.password_env.as_deref(),
        m.password_file.as_deref(),
        &span,
        rel,
    )?;
    let tls = match &m.tls {
        Some(t) => TlsMode::from_name(t.get_ref()).ok_or_else(|| {
            (
                Some(t.span()),
                format!(
                    "unknown TLS mode `{}`; expected `none`, `starttls` or `tls`",
                    t.get_ref()
                ),
            )
        })?,
        None => TlsMode::None,
    };
    if let Some(from) = &m.from {
        check_email(from.get_ref()).map_err(|e| (Some(from.span()), e))?;
    }
    if password.is_some() && m.username.is_none() {
        return Err((
            Some(span),
            "a password is named but no username; add username = \"...\"".into(),
        ));
    }
    Ok(MailSettings {
        server: m.server.unwrap_or(defaults.server),
        port: m.port.map_or(tls.default_port(), |p| p.0 as u16),
        tls,
        username: m.username,
        password,
        from: m.from.map(Spanned::into_inner),
        timeout: m.timeout.map_or(defaults.timeout, |d| d.0),
    })
}

/// Whether `s` looks like an e-mail address; the message says what to write if not.
pub fn check_email(s: &str) -> Result<(), String> {
    let ok = s
        .split_once('@')
        .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty() && !s.contains(char::is_whitespace));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not an e-mail address; write e.g. \"webmaster@example.org\""
        ))
    }
}
