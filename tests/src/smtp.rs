//! A real SMTP server on loopback for the mail tests (mailin-embedded's
//! protocol implementation): every message it accepts is kept with its
//! envelope, for the tests to read back.

use mailin_embedded::{Handler, Response, Server, SslConfig, response};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A message as the server received it.
#[derive(Clone, Debug, Default)]
pub struct Delivered {
    /// The envelope sender (`MAIL FROM`).
    pub from: String,
    /// The envelope recipients (`RCPT TO`).
    pub to: Vec<String>,
    /// The message: headers, a blank line, the body.
    pub data: String,
}

impl Delivered {
    /// A header's value (the first of that name), unfolded.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let mut value: Option<String> = None;
        for line in head.split("\r\n") {
            match (&mut value, line.starts_with([' ', '\t'])) {
                (Some(v), true) => v.push_str(line.trim_start_matches(['\t'])),
                (Some(_), false) => break,
                (None, _) => {
                    if let Some((n, v)) = line.split_once(':')
                        && n.eq_ignore_ascii_case(name)
                    {
                        value = Some(v.trim().to_string());
                    }
                }
            }
        }
        value
    }

    /// The body as a mail reader shows it: quoted-printable decoded, CRLF
    /// turned into LF.
    pub fn body(&self) -> String {
        let raw = self
            .data
            .split_once("\r\n\r\n")
            .map(|(_, b)| b)
            .unwrap_or_default();
        let qp = self
            .header("Content-Transfer-Encoding")
            .is_some_and(|e| e.eq_ignore_ascii_case("quoted-printable"));
        let text = if qp {
            decode_quoted_printable(raw)
        } else {
            raw.to_string()
        };
        text.replace("\r\n", "\n")
    }
}

/// RFC 2045 quoted-printable: `=` at a line's end joins it to the next,
/// `=XX` is the byte XX.
fn decode_quoted_printable(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'=' {
            if b[i + 1..].starts_with(b"\r\n") {
                i += 3;
                continue;
            }
            if let Some(hex) = s.get(i + 1..i + 3)
                && let Ok(v) = u8::from_str_radix(hex, 16)
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Clone)]
struct Collect {
    inbox: Arc<Mutex<Vec<Delivered>>>,
    current: Delivered,
}

impl Handler for Collect {
    fn data_start(&mut self, _domain: &str, from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.current = Delivered {
            from: from.to_string(),
            to: to.to_vec(),
            data: String::new(),
        };
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current.data.push_str(&String::from_utf8_lossy(buf));
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let message = std::mem::take(&mut self.current);
        self.inbox.lock().unwrap().push(message);
        response::OK
    }
}

/// An SMTP server on a free loopback port, serving until the test process ends.
pub struct SmtpSink {
    port: u16,
    inbox: Arc<Mutex<Vec<Delivered>>>,
}

impl SmtpSink {
    /// Start it on a thread of its own.
    pub fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let inbox = Arc::new(Mutex::new(Vec::new()));
        let handler = Collect {
            inbox: inbox.clone(),
            current: Delivered::default(),
        };
        let mut server = Server::new(handler);
        server
            .with_name("sink.test")
            .with_ssl(SslConfig::None)
            .expect("plain SMTP")
            .with_num_threads(2)
            .with_tcp_listener(listener);
        std::thread::Builder::new()
            .name("smtp-sink".into())
            .spawn(move || {
                let _ = server.serve();
            })
            .expect("SMTP thread");
        SmtpSink { port, inbox }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every message accepted so far, in order.
    pub fn messages(&self) -> Vec<Delivered> {
        self.inbox.lock().unwrap().clone()
    }
}

/// A loopback port nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}
