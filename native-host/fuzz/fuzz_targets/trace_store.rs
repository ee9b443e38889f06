//! Arbitrary bytes as a stored trace's files, which the user writes and root reads under sudo
//! (issue 20): a meta file (`parse_meta`: it may only ever name its own trace), what `prune`
//! drops of the parsed ones, and a `trace_fetch` page cut from the bytes (`chunk`: never an
//! empty page that points at itself).
#![no_main]

use about_startup_host::trace::store::{chunk, parse_meta, to_prune, valid_id};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (name_len, rest) = data.split_first().map_or((0, data), |(n, r)| (*n as usize, r));
    let (name, body) = rest.split_at(name_len.min(rest.len()));
    let name = String::from_utf8_lossy(name).into_owned();
    let metas: Vec<_> = parse_meta(&name, body).into_iter().collect();
    for m in &metas {
        assert!(valid_id(&m.id), "{:?}", m.id);
        assert_eq!(format!("{}.meta.json", m.id), name);
    }
    for id in to_prune(&metas, 0, 0) {
        assert!(valid_id(&id));
    }
    let total = body.len() as u64 + u64::from(data.first().copied().unwrap_or(0) % 3);
    let start = u64::from(data.last().copied().unwrap_or(0)) % (body.len() as u64 + 1);
    let page = &body[start as usize..];
    if let Ok(c) = chunk("f", page, start, total) {
        assert!(c.data.len() <= page.len());
        assert!(c.next_offset.is_none_or(|n| n > start), "{c:?}");
    }
});
