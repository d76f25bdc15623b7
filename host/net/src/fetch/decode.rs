//! Content codings the HTTP client leaves encoded: it decodes a body sent
//! with one coding (`gzip`, `deflate` or `br`), not one sent with several
//! (`Content-Encoding: gzip, gzip`), which came through as compressed
//! bytes and was stored and parsed as such. Here the codings are undone in
//! turn, the last applied first, each layer's output held to the body cap
//! (a stack of compression bombs stops at it as a single one does).

use std::io::Read;

/// The most codings undone: a server may stack a few; more is no
/// ordinary body.
const MAX_LAYERS: usize = 4;

/// One content coding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coding {
    Gzip,
    Deflate,
    Brotli,
}

/// The codings of a `Content-Encoding` value, in the order they were
/// applied, `identity` left out; `None` when one is unknown or there are
/// more than [`MAX_LAYERS`] (the body is then kept as it came).
fn codings(value: &str) -> Option<Vec<Coding>> {
    let mut out = Vec::new();
    for c in value.split(',').map(|c| c.trim().to_ascii_lowercase()) {
        match c.as_str() {
            "gzip" | "x-gzip" => out.push(Coding::Gzip),
            "deflate" => out.push(Coding::Deflate),
            "br" => out.push(Coding::Brotli),
            "identity" | "" => {}
            _ => return None,
        }
    }
    (out.len() <= MAX_LAYERS).then_some(out)
}

/// Read at most `cap` bytes of `r` into a vector, and whether there were more.
fn capped(r: impl Read, cap: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    r.take(cap + 1).read_to_end(&mut out)?;
    let truncated = out.len() as u64 > cap;
    out.truncate(cap as usize);
    Ok((out, truncated))
}

/// Undo one coding of `body`, up to `cap` bytes: `deflate` is the zlib
/// format as HTTP says, or the raw deflate some servers send.
fn undo(coding: Coding, body: &[u8], cap: u64) -> std::io::Result<(Vec<u8>, bool)> {
    match coding {
        Coding::Gzip => capped(flate2::read::MultiGzDecoder::new(body), cap),
        Coding::Deflate => capped(flate2::read::ZlibDecoder::new(body), cap)
            .or_else(|_| capped(flate2::read::DeflateDecoder::new(body), cap)),
        Coding::Brotli => capped(brotli::Decompressor::new(body, 4096), cap),
    }
}

/// `body` with the codings of `content_encoding` undone, and whether a
/// layer was cut at `cap`; `Ok(None)` when the codings are not ones this
/// undoes (the body is kept as it came), an error when the body is not
/// what its codings say.
pub(super) fn decode(
    content_encoding: &str,
    body: &[u8],
    cap: u64,
) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    let Some(layers) = codings(content_encoding) else {
        return Ok(None);
    };
    let mut data = body.to_vec();
    let mut truncated = false;
    for coding in layers.into_iter().rev() {
        let (out, cut) = undo(coding, &data, cap)?;
        data = out;
        truncated |= cut;
        if cut {
            // A cut layer's output is no whole input for the next.
            break;
        }
    }
    Ok(Some((data, truncated)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    fn zlib(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn stacked_codings_are_undone_last_applied_first() {
        let page = b"<html><title>twice</title></html>";
        assert_eq!(
            decode("gzip, gzip", &gzip(&gzip(page)), 1 << 20).unwrap(),
            Some((page.to_vec(), false))
        );
        assert_eq!(
            decode("deflate, gzip", &gzip(&zlib(page)), 1 << 20).unwrap(),
            Some((page.to_vec(), false))
        );
        assert_eq!(
            decode("identity, GZIP", &gzip(page), 1 << 20).unwrap(),
            Some((page.to_vec(), false))
        );
        assert_eq!(decode("gzip, compress", page, 1 << 20).unwrap(), None);
        assert_eq!(
            decode("gzip,gzip,gzip,gzip,gzip", page, 1 << 20).unwrap(),
            None
        );
        assert!(decode("gzip, gzip", page, 1 << 20).is_err());
    }

    #[test]
    fn a_stack_of_bombs_stops_at_the_cap() {
        let zeros = vec![0u8; 8 << 20];
        let (out, truncated) = decode("gzip, gzip", &gzip(&gzip(&zeros)), 1 << 20)
            .unwrap()
            .unwrap();
        assert_eq!((out.len(), truncated), (1 << 20, true));
    }
}
