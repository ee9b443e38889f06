//! Firefox's mozlz4 ("jsonlz4") files: the 8 bytes `mozLz40\0`, the decompressed size as a
//! little-endian u32, then one LZ4 block. Its archived Telemetry pings ([`super::telemetry`]) and
//! its session files ([`super::profile_facts`]) are written so. Pure and bounded: the size is
//! checked before anything is allocated.

/// The mozlz4 magic.
pub const MAGIC: &[u8; 8] = b"mozLz40\0";
/// A main ping is ~50-300 KB of JSON, a session file rarely more than a few MB; anything far
/// larger is not one (at 32 MiB, 100 planted
/// pings took 2.9 s to decode).
pub const MAX_DECOMPRESSED: usize = 4 * 1024 * 1024;
/// Why a mozlz4 file could not be decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("not a mozlz4 file (no mozLz40 header)")]
    NotMozLz4,
    #[error("declares {0} bytes decompressed, more than the {MAX_DECOMPRESSED} allowed")]
    TooLarge(usize),
    #[error("corrupt LZ4 block: {0}")]
    Corrupt(String),
    #[error("decompressed to {got} bytes, the header said {want}")]
    WrongSize { got: usize, want: usize },
}

/// Decodes a mozlz4 file's bytes.
pub fn decode_mozlz4(bytes: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(DecodeError::NotMozLz4)?;
    let (size, block) = rest
        .split_first_chunk::<4>()
        .ok_or(DecodeError::NotMozLz4)?;
    let want = u32::from_le_bytes(*size) as usize;
    if want > MAX_DECOMPRESSED {
        return Err(DecodeError::TooLarge(want));
    }
    let mut out = vec![0u8; want];
    let got = lz4_flex::block::decompress_into(block, &mut out)
        .map_err(|e| DecodeError::Corrupt(e.to_string()))?;
    if got != want {
        return Err(DecodeError::WrongSize { got, want });
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A mozlz4 file of `json` (lz4_flex has no encoder here: a literal-only LZ4 block, which
    /// is valid LZ4: one sequence whose literals are the whole input).
    pub(crate) fn mozlz4(json: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        let n = json.len();
        if n < 15 {
            out.push((n as u8) << 4);
        } else {
            out.push(0xF0);
            let mut rest = n - 15;
            while rest >= 255 {
                out.push(255);
                rest -= 255;
            }
            out.push(rest as u8);
        }
        out.extend_from_slice(json);
        out
    }

    const JSON: &[u8] = br#"{"type":"main","payload":{"simpleMeasurements":{"main":52}}}"#;

    #[test]
    fn decodes_mozlz4_and_refuses_what_is_not() {
        assert_eq!(decode_mozlz4(&mozlz4(JSON)).unwrap(), JSON);
        assert_eq!(decode_mozlz4(b"{\"a\":1}"), Err(DecodeError::NotMozLz4));
        assert_eq!(decode_mozlz4(b"mozLz40\0\x01"), Err(DecodeError::NotMozLz4));
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            decode_mozlz4(&huge),
            Err(DecodeError::TooLarge(_))
        ));
        let mut short = mozlz4(b"hello world, hello world");
        short.truncate(short.len() - 3);
        assert!(matches!(
            decode_mozlz4(&short),
            Err(DecodeError::Corrupt(_))
        ));
        // the header says more than the block holds
        let mut lying = mozlz4(b"abc");
        lying[8] = 10;
        assert!(decode_mozlz4(&lying).is_err());
    }
}
