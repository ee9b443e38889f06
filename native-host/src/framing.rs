//! Native-messaging frames: a 4-byte length in native byte order, then that many bytes of UTF-8
//! JSON. Generic over `Read`/`Write` so the host loop, the tracer's protocol (tracer/), the tests
//! and the fuzz target share it. A leaf: it uses nothing of the crate.
//!
//! Reads are bounded (`take(len)`): a peer that announces 4 GiB never makes us allocate 4 GiB,
//! and an oversized body is skipped, so the next frame is still found where it should be.

use std::io::{self, Read, Write};

/// Largest request body the host accepts (docs/PROTOCOL.md, "Framing"). No request needs more;
/// a larger one is skipped and answered with `frame_too_large`.
pub const MAX_INCOMING: u32 = 1024 * 1024;

/// Largest frame the host may send. This is Firefox's own limit for host → browser messages
/// (`MAX_READ` in toolkit/components/extensions/NativeMessaging.sys.mjs, pref
/// `webextensions.native-messaging.max-input-message-bytes`): Firefox drops the port on a larger
/// one, so a frame over it is never written.
pub const MAX_OUTGOING: usize = 1024 * 1024;

/// What one attempt to read a frame found.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The stream ended cleanly, between frames.
    Eof,
    /// A whole frame body (not yet checked for UTF-8 or JSON).
    Frame(Vec<u8>),
    /// The length prefix was over [`MAX_INCOMING`]; the body was read and discarded, so the
    /// stream is in sync again.
    TooLarge { len: u32 },
    /// The stream ended inside the length prefix or the body.
    Truncated,
}

/// Read one frame. I/O errors other than end-of-file are returned as `Err`.
pub fn read_frame<R: Read>(reader: &mut R) -> io::Result<ReadOutcome> {
    let mut prefix = [0u8; 4];
    match read_full(reader, &mut prefix)? {
        0 => return Ok(ReadOutcome::Eof),
        4 => {}
        _ => return Ok(ReadOutcome::Truncated),
    }
    let len = u32::from_ne_bytes(prefix);
    if len > MAX_INCOMING {
        return skip_body(reader, len);
    }
    let mut body = Vec::with_capacity(len as usize);
    reader.take(u64::from(len)).read_to_end(&mut body)?;
    if body.len() < len as usize {
        return Ok(ReadOutcome::Truncated);
    }
    Ok(ReadOutcome::Frame(body))
}

/// Discard an oversized body without holding it in memory.
fn skip_body<R: Read>(reader: &mut R, len: u32) -> io::Result<ReadOutcome> {
    let skipped = io::copy(&mut reader.take(u64::from(len)), &mut io::sink())?;
    if skipped < u64::from(len) {
        return Ok(ReadOutcome::Truncated);
    }
    Ok(ReadOutcome::TooLarge { len })
}

/// Fill `buf` as far as the stream allows; returns how many bytes were read (less than
/// `buf.len()` only at end-of-file). `read_exact` would not tell 0 bytes from 3.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Write one frame and flush it, so Firefox sees each message as soon as it is complete.
/// A body over [`MAX_OUTGOING`] is refused (`InvalidInput`) and nothing is written.
pub fn write_frame<W: Write>(writer: &mut W, body: &[u8]) -> io::Result<()> {
    if body.len() > MAX_OUTGOING {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a frame of {} bytes is over Firefox's {MAX_OUTGOING}-byte limit for host messages",
                body.len()
            ),
        ));
    }
    // The check above keeps the length within u32.
    let len = u32::try_from(body.len()).expect("frame length checked against MAX_OUTGOING");
    writer.write_all(&len.to_ne_bytes())?;
    writer.write_all(body)?;
    writer.flush()
}

/// `body` with its length prefix, as one buffer (fixtures, tests, fuzz seeds).
#[must_use]
pub fn encode(body: &[u8]) -> Vec<u8> {
    let len = u32::try_from(body.len()).expect("frame body over 4 GiB");
    let mut out = len.to_ne_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read_all(bytes: &[u8]) -> Vec<ReadOutcome> {
        let mut cursor = Cursor::new(bytes);
        let mut out = Vec::new();
        loop {
            let outcome = read_frame(&mut cursor).unwrap();
            let stop = matches!(outcome, ReadOutcome::Eof | ReadOutcome::Truncated);
            out.push(outcome);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn empty_stream_is_clean_eof() {
        assert_eq!(read_all(b""), vec![ReadOutcome::Eof]);
    }

    #[test]
    fn frames_follow_each_other() {
        let mut bytes = encode(b"{\"a\":1}");
        bytes.extend(encode(b""));
        assert_eq!(
            read_all(&bytes),
            vec![
                ReadOutcome::Frame(b"{\"a\":1}".to_vec()),
                ReadOutcome::Frame(Vec::new()),
                ReadOutcome::Eof
            ]
        );
    }

    #[test]
    fn truncated_length_prefix() {
        for n in 1..4 {
            assert_eq!(read_all(&[7u8; 4][..n]), vec![ReadOutcome::Truncated]);
        }
    }

    #[test]
    fn truncated_body() {
        let bytes = encode(b"hello");
        assert_eq!(read_all(&bytes[..7]), vec![ReadOutcome::Truncated]);
    }

    #[test]
    fn oversized_frame_is_skipped_and_the_next_one_served() {
        let big = vec![b'x'; MAX_INCOMING as usize + 1];
        let mut bytes = encode(&big);
        bytes.extend(encode(b"next"));
        assert_eq!(
            read_all(&bytes),
            vec![
                ReadOutcome::TooLarge {
                    len: MAX_INCOMING + 1
                },
                ReadOutcome::Frame(b"next".to_vec()),
                ReadOutcome::Eof
            ]
        );
    }

    #[test]
    fn frame_of_exactly_the_limit_is_accepted() {
        let body = vec![b' '; MAX_INCOMING as usize];
        assert_eq!(read_all(&encode(&body))[0], ReadOutcome::Frame(body));
    }

    #[test]
    fn huge_length_with_short_body_is_truncated_without_allocating_it() {
        let mut bytes = u32::MAX.to_ne_bytes().to_vec();
        bytes.extend(b"short");
        assert_eq!(read_all(&bytes), vec![ReadOutcome::Truncated]);
    }

    #[test]
    fn length_is_native_endian() {
        let bytes = encode(b"abc");
        assert_eq!(&bytes[..4], &3u32.to_ne_bytes());
    }

    #[test]
    fn write_frame_prefixes_and_flushes() {
        let mut out = Vec::new();
        write_frame(&mut out, b"{}").unwrap();
        assert_eq!(out, encode(b"{}"));
    }

    #[test]
    fn write_frame_refuses_over_the_limit_and_writes_nothing() {
        let mut out = Vec::new();
        write_frame(&mut out, &vec![b'x'; MAX_OUTGOING]).unwrap();
        out.clear();
        let err = write_frame(&mut out, &vec![b'x'; MAX_OUTGOING + 1]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }
}
