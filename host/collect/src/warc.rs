//! WARC 1.1 (ISO 28500:2017) output: every exchange of a collection run as
//! the web archive replay tools read (pywb, ReplayWeb.page), as wget's
//! `--warc-file` writes it. A file opens with a `warcinfo` record; each
//! retrieval adds a `request` and its `response` (the HTTP message as
//! received, headers and body), an unchanged resource a `revisit` that
//! points at the response holding its body, and a run may add `metadata`.
//! Block and payload digests are SHA-256 in hex, which readers accept.
//!
//! A revisit is written as replay tools serve one: the
//! `identical-payload-digest` profile, its HTTP head a `200`'s (the new
//! response's, or for a `304 Not Modified` the head of the stored response
//! it refers to, read back with [`WarcWriter::stored_response`]), whose
//! status and headers a replay serves with the referred record's body. A
//! `server-not-modified` revisit, whose head is the 304, is replayed by
//! pywb as the 304 with no body.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufRead, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A record's id, `<urn:uuid:…>`.
pub type RecordId = String;

/// The revisit profile replay tools serve: the record's head with the
/// body of the record it refers to.
pub const IDENTICAL_PAYLOAD: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// A response record as read back from a WARC file for a revisit to refer
/// to ([`WarcWriter::stored_response`]): everything but its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredResponse {
    /// Its record id.
    pub record: RecordId,
    /// Its `WARC-Target-URI`.
    pub uri: String,
    /// Its `WARC-Date` (Unix seconds).
    pub date: i64,
    /// Its `WARC-Payload-Digest`, if it has one.
    pub payload_digest: Option<String>,
    /// Its HTTP head: the status line and headers, up to and with the
    /// blank line that ends them.
    pub head: Vec<u8>,
}

/// The response record that holds a body a revisit does not store again.
#[derive(Clone, Copy, Debug)]
pub struct Original<'a> {
    /// Its record id.
    pub record: &'a str,
    /// Its target URI.
    pub uri: &'a str,
    /// When it was written (Unix seconds).
    pub date: i64,
    /// Its payload digest ([`payload_digest`]).
    pub payload_digest: &'a str,
}

/// How a record read from another file is written again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Again {
    /// Under a new id (its old file stays).
    NewId,
    /// Under its own id, with the records it names (its old file goes).
    SameId,
    /// Under its own id, alone: its `WARC-Concurrent-To` is left out.
    SameIdAlone,
}

/// Writes WARC records to `out`, one after the other.
pub struct WarcWriter<W: Write> {
    out: W,
    /// The `warcinfo` record's id, which every record names.
    info: RecordId,
    /// Records written, to make each id distinct.
    written: u64,
    /// Bytes written.
    bytes: u64,
    /// Each record its own gzip member (a `.warc.gz` file), as readers
    /// expect of a compressed WARC.
    gzip: bool,
    /// Where each response record starts in the other WARC files this
    /// one's revisits refer to, by file, each file read once.
    elsewhere: HashMap<PathBuf, HashMap<RecordId, u64>>,
}

/// The current time as WARC writes it: `2026-11-23T20:05:00Z`.
pub fn warc_date(unix: i64) -> String {
    jiff::Timestamp::from_second(unix)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

fn sha256_label(data: &[u8]) -> String {
    format!("sha256:{}", spinneret_core::digest::sha256_hex(data))
}

/// Where an HTTP message's body starts: after the blank line that ends its
/// headers (the whole message when it has none).
fn body_start(message: &[u8]) -> usize {
    message
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(0, |i| i + 4)
}

impl<W: Write> WarcWriter<W> {
    /// Start a WARC on `out` with its `warcinfo` record: the file's name,
    /// the software, and the format.
    pub fn new(out: W, filename: &str, software: &str, now: i64) -> std::io::Result<Self> {
        let mut w = WarcWriter {
            out,
            info: String::new(),
            written: 0,
            bytes: 0,
            gzip: filename.ends_with(".gz"),
            elsewhere: HashMap::new(),
        };
        let body = format!(
            "software: {software}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
        );
        let id = w.id(filename.as_bytes(), now);
        w.record(
            &id,
            "warcinfo",
            now,
            &[
                ("WARC-Filename", filename),
                ("Content-Type", "application/warc-fields"),
            ],
            body.as_bytes(),
        )?;
        w.info = id;
        Ok(w)
    }

    /// A record id: a UUID made from what the record is about, when, how
    /// many records came before it in this file, and the file.
    fn id(&mut self, about: &[u8], now: i64) -> RecordId {
        self.written += 1;
        let mut h = Sha256::new();
        h.update(about);
        h.update(now.to_le_bytes());
        h.update(self.written.to_le_bytes());
        h.update(std::process::id().to_le_bytes());
        // The file's own warcinfo id: a record copied from another file
        // at the same place in it is still a record of its own.
        h.update(self.info.as_bytes());
        let d = h.finalize();
        let mut b = [0u8; 16];
        b.copy_from_slice(&d[..16]);
        b[6] = (b[6] & 0x0f) | 0x40; // version 4 layout
        b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "<urn:uuid:{}-{}-{}-{}-{}>",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }

    fn record(
        &mut self,
        id: &str,
        kind: &str,
        now: i64,
        fields: &[(&str, &str)],
        block: &[u8],
    ) -> std::io::Result<()> {
        let mut head = format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {id}\r\nWARC-Date: {}\r\n",
            warc_date(now)
        );
        if !self.info.is_empty() {
            head.push_str(&format!("WARC-Warcinfo-ID: {}\r\n", self.info));
        }
        for (name, value) in fields {
            // A field value never carries a line break (a URL could try).
            let value: String = value.chars().filter(|c| *c != '\r' && *c != '\n').collect();
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "WARC-Block-Digest: {}\r\nContent-Length: {}\r\n\r\n",
            sha256_label(block),
            block.len()
        ));
        if self.gzip {
            // The fast level: a run's archive is written while it fetches,
            // and deflate's default level cost about a tenth of a large
            // run's time for a few percent of its size.
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(head.as_bytes())?;
            z.write_all(block)?;
            z.write_all(b"\r\n\r\n")?;
            let member = z.finish()?;
            self.out.write_all(&member)?;
            self.bytes += member.len() as u64;
        } else {
            self.out.write_all(head.as_bytes())?;
            self.out.write_all(block)?;
            self.out.write_all(b"\r\n\r\n")?;
            self.bytes += (head.len() + block.len() + 4) as u64;
        }
        Ok(())
    }

    /// The HTTP request sent for `url` (request line and headers).
    pub fn request(&mut self, url: &str, message: &[u8], now: i64) -> std::io::Result<RecordId> {
        let id = self.id(message, now);
        self.record(
            &id,
            "request",
            now,
            &[
                ("WARC-Target-URI", url),
                ("Content-Type", "application/http;msgtype=request"),
            ],
            message,
        )?;
        Ok(id)
    }

    /// The HTTP response received for `url` (status line, headers and
    /// body), following `request`.
    pub fn response(
        &mut self,
        url: &str,
        message: &[u8],
        request: &str,
        now: i64,
    ) -> std::io::Result<RecordId> {
        let id = self.id(message, now);
        let payload = payload_digest(message);
        self.record(
            &id,
            "response",
            now,
            &[
                ("WARC-Target-URI", url),
                ("WARC-Concurrent-To", request),
                ("WARC-Payload-Digest", &payload),
                ("Content-Type", "application/http;msgtype=response"),
            ],
            message,
        )?;
        Ok(id)
    }

    /// `url` answered with the same body as the response `original` holds:
    /// a revisit of the `identical-payload-digest` profile, its block
    /// `head` alone (a status line and headers, no body). A replay tool
    /// serves that status and those headers with `original`'s body, so
    /// `head` is a `200`'s: the new response's when the body was fetched
    /// again, the stored response's ([`WarcWriter::stored_response`]) when
    /// the server answered `304 Not Modified`. A `3xx` head is refused: a
    /// replay tool serves it with no body (pywb's 304 of 0 bytes).
    pub fn revisit(
        &mut self,
        url: &str,
        head: &[u8],
        original: &Original<'_>,
        now: i64,
    ) -> std::io::Result<RecordId> {
        if head.starts_with(b"HTTP/") && head.get(9) == Some(&b'3') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a revisit's head must be the stored response's, not a redirect's or a 304's: a replay tool serves it with no body",
            ));
        }
        let id = self.id(head, now);
        let date = warc_date(original.date);
        self.record(
            &id,
            "revisit",
            now,
            &[
                ("WARC-Target-URI", url),
                ("WARC-Profile", IDENTICAL_PAYLOAD),
                ("WARC-Refers-To", original.record),
                ("WARC-Refers-To-Target-URI", original.uri),
                ("WARC-Refers-To-Date", &date),
                ("WARC-Payload-Digest", original.payload_digest),
                ("Content-Type", "application/http;msgtype=response"),
            ],
            head,
        )?;
        Ok(id)
    }

    /// The response record `id` of the WARC file at `file` (another run's,
    /// which this file's revisits refer to): its target URI, date, payload
    /// digest and HTTP head, its body left where it is. Each file is read
    /// through once, at its first look-up, for where its response records
    /// start; a look-up then reads one record's head. `None` when the file
    /// has no such response.
    pub fn stored_response(
        &mut self,
        file: &Path,
        id: &str,
    ) -> std::io::Result<Option<StoredResponse>> {
        if !self.elsewhere.contains_key(file) {
            let starts = response_starts(file)?;
            self.elsewhere.insert(file.to_path_buf(), starts);
        }
        let Some(&at) = self.elsewhere.get(file).and_then(|s| s.get(id)) else {
            return Ok(None);
        };
        stored_response_at(file, at, id)
    }

    /// Fields about `url` (`name: value` lines): what the run made of it,
    /// made at the same time as the record `concurrent_to`, if any (the
    /// response or revisit it describes).
    pub fn metadata(
        &mut self,
        url: &str,
        concurrent_to: Option<&str>,
        fields: &[(&str, &str)],
        now: i64,
    ) -> std::io::Result<RecordId> {
        let body: String = fields
            .iter()
            .map(|(k, v)| format!("{k}: {}\r\n", v.replace(['\r', '\n'], " ")))
            .collect();
        let id = self.id(body.as_bytes(), now);
        let mut head = vec![
            ("WARC-Target-URI", url),
            ("Content-Type", "application/warc-fields"),
        ];
        if let Some(r) = concurrent_to {
            head.push(("WARC-Concurrent-To", r));
        }
        self.record(&id, "metadata", now, &head, body.as_bytes())?;
        Ok(id)
    }

    /// Write `rec`, read from an earlier run's WARC, again in this one:
    /// under a new id and this file's `warcinfo`, at its own date, with its
    /// own fields, but its `WARC-Concurrent-To` mapped through `ids` (the
    /// new ids of the records copied before it, which this call extends).
    pub fn copy(
        &mut self,
        rec: &ReadRecord,
        ids: &mut std::collections::HashMap<String, RecordId>,
    ) -> std::io::Result<RecordId> {
        self.write_again(rec, ids, Again::NewId)
    }

    /// Write `rec`, read from the WARC file of a run that is being
    /// removed, into this one under its own record id (revisits refer to
    /// it by that id, and its old file is about to go). `with_its_request`
    /// when the record it is concurrent to comes too; else that field is
    /// left out rather than name a record no file holds.
    pub fn adopt(&mut self, rec: &ReadRecord, with_its_request: bool) -> std::io::Result<RecordId> {
        let mode = match with_its_request {
            true => Again::SameId,
            false => Again::SameIdAlone,
        };
        self.write_again(rec, &mut Default::default(), mode)
    }

    fn write_again(
        &mut self,
        rec: &ReadRecord,
        ids: &mut std::collections::HashMap<String, RecordId>,
        mode: Again,
    ) -> std::io::Result<RecordId> {
        let same_id = mode != Again::NewId;
        let date = rec
            .field("WARC-Date")
            .and_then(|d| d.parse::<jiff::Timestamp>().ok())
            .map_or(0, |t| t.as_second());
        let id = match rec.field("WARC-Record-ID") {
            Some(old) if same_id => old.to_string(),
            _ => self.id(&rec.block, date),
        };
        let fields: Vec<(&str, String)> = rec
            .fields
            .iter()
            .filter(|(n, _)| {
                // Written anew for this file; and a record alone names no
                // record it came with.
                let name = n.to_ascii_lowercase();
                let alone = mode == Again::SameIdAlone && name == "warc-concurrent-to";
                let anew = matches!(
                    name.as_str(),
                    "warc-type"
                        | "warc-record-id"
                        | "warc-date"
                        | "warc-warcinfo-id"
                        | "warc-block-digest"
                        | "content-length"
                );
                !(anew || alone)
            })
            .map(
                |(n, v)| match n.eq_ignore_ascii_case("WARC-Concurrent-To") {
                    true => (n.as_str(), ids.get(v).cloned().unwrap_or_else(|| v.clone())),
                    false => (n.as_str(), v.clone()),
                },
            )
            .collect();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        self.record(&id, &rec.kind, date, &fields, &rec.block)?;
        if let Some(old) = rec.field("WARC-Record-ID") {
            ids.insert(old.to_string(), id.clone());
        }
        Ok(id)
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flush and hand back the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A record read back from a WARC file.
#[derive(Clone, Debug)]
pub struct ReadRecord {
    /// Its `WARC-Type`.
    pub kind: String,
    /// Its header fields, in order (`WARC-Type` among them).
    pub fields: Vec<(String, String)>,
    /// Its block.
    pub block: Vec<u8>,
}

impl ReadRecord {
    /// The value of the field `name` (any case).
    pub fn field(&self, name: &str) -> Option<&str> {
        field_of(&self.fields, name)
    }
}

/// Reads the records of a WARC file one at a time: a `.warc.gz` of gzip
/// members (read as one stream) or a plain `.warc`. A header is bounded
/// (64 KiB) and a block can be no longer than `max_block`, so a damaged
/// file is an error, not an allocation of whatever it claims.
pub struct WarcReader<R: std::io::BufRead> {
    input: R,
    max_block: u64,
}

/// A record's header fields, in order.
type Fields = Vec<(String, String)>;

/// The longest header a [`WarcReader`] reads.
const MAX_HEADER: usize = 64 * 1024;

impl WarcReader<Box<dyn std::io::BufRead>> {
    /// Read the WARC file at `path` (gzip when its name ends `.gz`).
    pub fn open(path: &std::path::Path, max_block: u64) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let input: Box<dyn std::io::BufRead> = match path.extension().is_some_and(|e| e == "gz") {
            true => Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(
                file,
            ))),
            false => Box::new(std::io::BufReader::new(file)),
        };
        Ok(WarcReader { input, max_block })
    }
}

impl<R: std::io::BufRead> WarcReader<R> {
    fn bad(why: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, why)
    }

    /// The next record's header fields and its block's length, `None` at
    /// the end of the file; the block is next to read.
    fn read_header(&mut self) -> std::io::Result<Option<(Fields, u64)>> {
        let mut line = Vec::new();
        // Blank lines between records (the end of the last one) are skipped.
        loop {
            line.clear();
            if (&mut self.input)
                .take(MAX_HEADER as u64)
                .read_until(b'\n', &mut line)?
                == 0
            {
                return Ok(None);
            }
            if !line.trim_ascii().is_empty() {
                break;
            }
        }
        if !line.starts_with(b"WARC/") {
            return Err(Self::bad(
                "a record does not start with its WARC version".into(),
            ));
        }
        let mut fields = Vec::new();
        let mut header = line.len();
        loop {
            line.clear();
            let n = (&mut self.input)
                .take(MAX_HEADER as u64)
                .read_until(b'\n', &mut line)?;
            header += n;
            if n == 0 || header > MAX_HEADER {
                return Err(Self::bad("a record's header does not end".into()));
            }
            let text = String::from_utf8_lossy(line.trim_ascii());
            if text.is_empty() {
                break;
            }
            if let Some((name, value)) = text.split_once(':') {
                fields.push((name.trim().to_string(), value.trim().to_string()));
            }
        }
        let len: u64 = fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
            .and_then(|(_, l)| l.parse().ok())
            .ok_or_else(|| Self::bad("a record has no Content-Length".into()))?;
        Ok(Some((fields, len)))
    }

    /// Pass over the `len` bytes of the block whose header was just read.
    fn pass_block(&mut self, len: u64) -> std::io::Result<()> {
        let passed = std::io::copy(&mut (&mut self.input).take(len), &mut std::io::sink())?;
        match passed == len {
            true => Ok(()),
            false => Err(Self::bad("the file ends inside a record".into())),
        }
    }

    /// The next record, `None` at the end of the file.
    fn read_record(&mut self) -> std::io::Result<Option<ReadRecord>> {
        let Some((fields, len)) = self.read_header()? else {
            return Ok(None);
        };
        if len > self.max_block {
            return Err(Self::bad(format!(
                "a record claims {len} bytes, more than {}",
                self.max_block
            )));
        }
        let mut rec = ReadRecord {
            kind: String::new(),
            fields,
            block: Vec::new(),
        };
        rec.kind = rec.field("WARC-Type").unwrap_or_default().to_string();
        (&mut self.input).take(len).read_to_end(&mut rec.block)?;
        if rec.block.len() as u64 != len {
            return Err(Self::bad("the file ends inside a record".into()));
        }
        Ok(Some(rec))
    }
}

/// Whether the WARC file at `path` is gzip members (its name ends `.gz`).
fn gzipped(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// The value of the field `name` (any case) among `fields`.
fn field_of<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Where each response record of the WARC file at `path` starts, by its
/// id: the offset of its gzip member (of the record itself in a plain
/// file). The file is read through once; no block is kept.
fn response_starts(path: &Path) -> std::io::Result<HashMap<RecordId, u64>> {
    let mut input = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut starts = HashMap::new();
    let mut note = |fields: &[(String, String)], at: u64| {
        if field_of(fields, "WARC-Type") == Some("response")
            && let Some(id) = field_of(fields, "WARC-Record-ID")
        {
            starts.entry(id.to_string()).or_insert(at);
        }
    };
    loop {
        let at = input.stream_position()?;
        if input.fill_buf()?.is_empty() {
            break;
        }
        if gzipped(path) {
            // One member (a bufread decoder stops at its end): its
            // records, one each as spinneret writes them.
            let member = flate2::bufread::GzDecoder::new(&mut input);
            let mut records = WarcReader {
                input: std::io::BufReader::new(member),
                max_block: u64::MAX,
            };
            while let Some((fields, len)) = records.read_header()? {
                note(&fields, at);
                records.pass_block(len)?;
            }
        } else {
            let mut records = WarcReader {
                input: &mut input,
                max_block: u64::MAX,
            };
            let Some((fields, len)) = records.read_header()? else {
                break;
            };
            note(&fields, at);
            records.pass_block(len)?;
        }
    }
    Ok(starts)
}

/// The response record `id` of the WARC file at `path`, read from `at`
/// (where [`response_starts`] found it) without its body.
fn stored_response_at(path: &Path, at: u64, id: &str) -> std::io::Result<Option<StoredResponse>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(std::io::SeekFrom::Start(at))?;
    let input: Box<dyn BufRead> = match gzipped(path) {
        true => Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(
            file,
        ))),
        false => Box::new(std::io::BufReader::new(file)),
    };
    let mut records = WarcReader {
        input,
        max_block: u64::MAX,
    };
    while let Some((fields, len)) = records.read_header()? {
        if field_of(&fields, "WARC-Record-ID") != Some(id) {
            records.pass_block(len)?;
            continue;
        }
        let mut start = Vec::new();
        (&mut records.input)
            .take(len.min(MAX_HEADER as u64))
            .read_to_end(&mut start)?;
        let end = start
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| {
                WarcReader::<Box<dyn BufRead>>::bad(format!(
                    "the response {id} has no HTTP head that ends"
                ))
            })?;
        start.truncate(end + 4);
        let date = field_of(&fields, "WARC-Date")
            .and_then(|d| d.parse::<jiff::Timestamp>().ok())
            .map_or(0, |t| t.as_second());
        return Ok(Some(StoredResponse {
            record: id.to_string(),
            uri: field_of(&fields, "WARC-Target-URI")
                .unwrap_or_default()
                .to_string(),
            date,
            payload_digest: field_of(&fields, "WARC-Payload-Digest").map(str::to_string),
            head: start,
        }));
    }
    Ok(None)
}

impl<R: std::io::BufRead> Iterator for WarcReader<R> {
    type Item = std::io::Result<ReadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_record().transpose()
    }
}

/// The payload digest of an HTTP message, as response and revisit records
/// carry it: a revisit names the digest of the body it did not store again.
pub fn payload_digest(message: &[u8]) -> String {
    sha256_label(&message[body_start(message)..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small WARC: what each record says, read back.
    fn sample() -> Vec<u8> {
        let now = 1_795_000_000;
        let mut w = WarcWriter::new(Vec::new(), "run-1.warc", "spinneret/test", now).unwrap();
        let req = w
            .request(
                "https://e.org/",
                b"GET / HTTP/1.1\r\nHost: e.org\r\nUser-Agent: spinneret\r\n\r\n",
                now,
            )
            .unwrap();
        let page = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 14\r\n\r\n<p>hello</p>\r\n";
        let resp = w.response("https://e.org/", page, &req, now).unwrap();
        w.request(
            "https://e.org/",
            b"GET / HTTP/1.1\r\nHost: e.org\r\n\r\n",
            now + 60,
        )
        .unwrap();
        let digest = payload_digest(page);
        let original = Original {
            record: &resp,
            uri: "https://e.org/",
            date: now,
            payload_digest: &digest,
        };
        w.revisit(
            "https://e.org/",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
            &original,
            now + 60,
        )
        .unwrap();
        w.metadata(
            "https://e.org/",
            None,
            &[("category", "URLs"), ("depth", "0")],
            now + 60,
        )
        .unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn records_read_back_and_copied_keep_their_fields_under_new_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.warc.gz");
        let mut w = WarcWriter::new(
            std::fs::File::create(&path).unwrap(),
            "a.warc.gz",
            "t",
            1_795_000_000,
        )
        .unwrap();
        let req = w
            .request("https://e.org/", b"GET / HTTP/1.1\r\n\r\n", 1_795_000_000)
            .unwrap();
        let page = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        w.response("https://e.org/", page, &req, 1_795_000_000)
            .unwrap();
        w.finish().unwrap();
        let read: Vec<ReadRecord> = WarcReader::open(&path, 1 << 20)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let kinds: Vec<&str> = read.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["warcinfo", "request", "response"]);
        assert_eq!(read[2].block, page);
        assert_eq!(read[2].field("warc-concurrent-to"), Some(req.as_str()));

        let mut again = WarcWriter::new(Vec::new(), "b.warc", "t", 1_796_000_000).unwrap();
        let mut ids = std::collections::HashMap::new();
        let new_req = again.copy(&read[1], &mut ids).unwrap();
        let new_resp = again.copy(&read[2], &mut ids).unwrap();
        assert!(new_req != req && ids[&req] == new_req);
        let out = again.finish().unwrap();
        let copied: Vec<ReadRecord> = WarcReader {
            input: &out[..],
            max_block: 1 << 20,
        }
        .collect::<Result<_, _>>()
        .unwrap();
        let resp = &copied[2];
        assert_eq!(resp.field("WARC-Record-ID"), Some(new_resp.as_str()));
        assert_eq!(resp.field("WARC-Concurrent-To"), Some(new_req.as_str()));
        assert_eq!(resp.field("WARC-Date"), read[2].field("WARC-Date"));
        assert_eq!(
            resp.field("WARC-Warcinfo-ID"),
            copied[0].field("WARC-Record-ID")
        );
        assert_eq!(
            resp.field("WARC-Payload-Digest"),
            read[2].field("WARC-Payload-Digest")
        );
        assert_eq!(resp.block, page);
        assert_eq!(
            resp.fields
                .iter()
                .filter(|(n, _)| n == "Content-Length")
                .count(),
            1
        );

        // Adopted from a file about to go: the same ids; alone, without
        // the request it named.
        let mut adopting = WarcWriter::new(Vec::new(), "c.warc", "t", 1_796_000_000).unwrap();
        assert_eq!(adopting.adopt(&read[1], true).unwrap(), req);
        let resp_id = read[2].field("WARC-Record-ID").unwrap().to_string();
        assert_eq!(adopting.adopt(&read[2], false).unwrap(), resp_id);
        let out = adopting.finish().unwrap();
        let adopted: Vec<ReadRecord> = WarcReader {
            input: &out[..],
            max_block: 1 << 20,
        }
        .collect::<Result<_, _>>()
        .unwrap();
        assert_eq!(adopted[1].field("WARC-Record-ID"), Some(req.as_str()));
        assert_eq!(adopted[2].field("WARC-Record-ID"), Some(resp_id.as_str()));
        assert_eq!(adopted[2].field("WARC-Concurrent-To"), None);
        assert_eq!(adopted[2].block, page);

        // A damaged file is an error, not a huge allocation.
        let claims = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99999999999\r\n\r\nx";
        let mut r = WarcReader {
            input: &claims[..],
            max_block: 1 << 20,
        };
        assert!(r.next().unwrap().is_err());
    }

    #[test]
    fn records_carry_their_fields_and_lengths() {
        let warc = sample();
        let text = String::from_utf8_lossy(&warc);
        let kinds: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("WARC-Type: "))
            .collect();
        assert_eq!(
            kinds,
            [
                "warcinfo", "request", "response", "request", "revisit", "metadata"
            ]
        );
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 6);
        assert!(text.contains("WARC-Date: 2026-11-18T"), "{text}");
        // Each record's Content-Length is its block's length.
        let mut rest: &[u8] = &warc;
        while !rest.is_empty() {
            let head_end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let head = String::from_utf8_lossy(&rest[..head_end]);
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .unwrap()
                .parse()
                .unwrap();
            let block = &rest[head_end..head_end + len];
            assert!(head.contains(&format!("WARC-Block-Digest: {}", sha256_label(block))));
            assert_eq!(&rest[head_end + len..head_end + len + 4], b"\r\n\r\n");
            rest = &rest[head_end + len + 4..];
        }
        // A URL cannot break a header line.
        let mut w = WarcWriter::new(Vec::new(), "x.warc", "t", 0).unwrap();
        w.metadata("https://e.org/\r\nWARC-Type: evil", None, &[], 0)
            .unwrap();
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert!(
            out.contains("WARC-Target-URI: https://e.org/WARC-Type: evil\r\n"),
            "{out}"
        );
        assert_eq!(out.matches("\r\nWARC-Type: ").count(), 2);
    }

    /// A revisit of a 304 refers to a response of an earlier run's file,
    /// found by its id (one gzip member each, or a plain file), with that
    /// response's head: what a replay tool serves with its body.
    #[test]
    fn a_stored_response_is_found_in_its_file_and_a_revisit_takes_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let then = 1_795_000_000;
        let png = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nETag: \"a1\"\r\nContent-Length: 4\r\n\r\nPNG!";
        let css = b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nContent-Length: 2\r\n\r\np{}";
        for name in ["1.warc.gz", "1.warc"] {
            let path = dir.path().join(name);
            let mut w =
                WarcWriter::new(std::fs::File::create(&path).unwrap(), name, "t", then).unwrap();
            let mut ids = Vec::new();
            for (url, message) in [
                ("https://e.org/a.png", &png[..]),
                ("https://e.org/s.css", &css[..]),
            ] {
                let req = w.request(url, b"GET / HTTP/1.1\r\n\r\n", then).unwrap();
                ids.push(w.response(url, message, &req, then).unwrap());
                w.metadata(url, Some(&req), &[("depth", "0")], then)
                    .unwrap();
            }
            w.finish().unwrap();

            let mut next = WarcWriter::new(Vec::new(), "2.warc", "t", then + 60).unwrap();
            let found = next.stored_response(&path, &ids[1]).unwrap().unwrap();
            assert_eq!(
                found,
                StoredResponse {
                    record: ids[1].clone(),
                    uri: "https://e.org/s.css".into(),
                    date: then,
                    payload_digest: Some(payload_digest(css)),
                    head: css[..css.len() - 3].to_vec(),
                }
            );
            let a = next.stored_response(&path, &ids[0]).unwrap().unwrap();
            assert_eq!(a.head, &png[..png.len() - 4], "{name}");
            // A request's id is no response's.
            assert_eq!(
                next.stored_response(&path, "<urn:uuid:nothing>").unwrap(),
                None
            );

            let digest = a.payload_digest.clone().unwrap();
            let original = Original {
                record: &a.record,
                uri: &a.uri,
                date: a.date,
                payload_digest: &digest,
            };
            // The 304's own head would replay as an empty 304.
            let refused = next.revisit(
                "https://e.org/a.png",
                b"HTTP/1.1 304 Not Modified\r\nETag: \"a1\"\r\n\r\n",
                &original,
                then + 60,
            );
            assert!(refused.is_err());
            next.revisit("https://e.org/a.png", &a.head, &original, then + 60)
                .unwrap();
            let out = next.finish().unwrap();
            let read: Vec<ReadRecord> = WarcReader {
                input: &out[..],
                max_block: 1 << 20,
            }
            .collect::<Result<_, _>>()
            .unwrap();
            let revisit = &read[1];
            assert_eq!(read.len(), 2);
            assert_eq!(revisit.kind, "revisit");
            assert_eq!(revisit.field("WARC-Profile"), Some(IDENTICAL_PAYLOAD));
            assert_eq!(revisit.field("WARC-Refers-To"), Some(ids[0].as_str()));
            assert_eq!(
                revisit.field("WARC-Refers-To-Target-URI"),
                Some("https://e.org/a.png")
            );
            assert_eq!(
                revisit.field("WARC-Refers-To-Date"),
                Some(warc_date(then).as_str())
            );
            assert_eq!(
                revisit.field("WARC-Payload-Digest"),
                Some(payload_digest(png).as_str())
            );
            assert_eq!(revisit.block, a.head);
        }
    }
}
