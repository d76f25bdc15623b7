//! How owners are mailed: the SMTP server, its TLS mode and credentials.
//! The password is never part of the configuration itself: it comes from an
//! environment variable or a file. The `[mail]` table is read here too
//! ([`mail_settings`]), as `[library]` is in `library.rs`.

use super::load::{check_email, password_source};
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

/// Where the SMTP password is read from when mail is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Password {
    /// An environment variable.
    Env(String),
    /// A file (its first line).
    File(PathBuf),
}

/// The most bytes of a password file read: a password is one short line,
/// and a device or a huge file named by mistake (`/dev/zero`) is not read
/// whole.
const MAX_PASSWORD_FILE_LINE: u64 = 4096;

/// The first line of the file at `path` (without its line ending), read
/// through at most [`MAX_PASSWORD_FILE_LINE`] bytes: an error when no line
/// ends within them, or when the line is not UTF-8.
fn first_line(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path)?;
    let mut line = Vec::new();
    std::io::BufReader::new(file)
        .take(MAX_PASSWORD_FILE_LINE + 1)
        .read_until(b'\n', &mut line)?;
    let ended = line.last() == Some(&b'\n');
    if !ended && line.len() as u64 > MAX_PASSWORD_FILE_LINE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "its first line is longer than {MAX_PASSWORD_FILE_LINE} bytes; a password file holds the password alone on its first line"
            ),
        ));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "its first line is not UTF-8 text",
        )
    })
}

impl Password {
    /// The password: the variable's value, or the file's first line. The
    /// error is the file's (`None` for a variable that is not set).
    pub fn value(&self) -> Result<String, Option<std::io::Error>> {
        match self {
            Password::Env(var) => std::env::var(var).map_err(|_| None),
            Password::File(path) => first_line(path).map_err(Some),
        }
    }

    /// Read the password now; the message names it (`what`: "SMTP
    /// password") and the key it was named by (`key`: `mail.password`, to
    /// which `_env` or `_file` is added).
    pub fn read(&self, what: &str, key: &str) -> Result<String, String> {
        self.value().map_err(|e| match (self, e) {
            (Password::Env(var), _) => {
                format!("the {what} variable {var} is not set ({key}_env)")
            }
            (Password::File(path), e) => format!(
                "cannot read the {what} file {} ({key}_file): {}",
                path.display(),
                e.map_or_else(String::new, |e| e.to_string())
            ),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_file_is_read_to_its_first_line_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret\r\nsecond line\n").unwrap();
        assert_eq!(
            Password::File(file.clone()).value().unwrap(),
            "s3cret".to_string()
        );
        std::fs::write(&file, "no line end").unwrap();
        assert_eq!(Password::File(file.clone()).value().unwrap(), "no line end");
        // A device that never ends, and a file of one endless line: refused
        // after 4 KiB, not read whole.
        for endless in [std::path::PathBuf::from("/dev/zero"), file.clone()] {
            if endless == file {
                std::fs::write(&file, vec![b'x'; 1 << 20]).unwrap();
            }
            let e = Password::File(endless.clone())
                .read("SMTP password", "mail.password")
                .unwrap_err();
            assert!(
                e.ends_with("its first line is longer than 4096 bytes; a password file holds the password alone on its first line"),
                "{e}"
            );
        }
    }
}
