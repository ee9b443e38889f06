//! How long each read took on the disk (issue 30 #15): the block requests that carried a read's
//! pages, from their issue (`block:block_rq_issue`) to their completion
//! (`block:block_rq_complete`). A read is a run of pages entering the page cache (its `t` is when
//! the first page went in, before the kernel submitted the I/O); the trace keeps the block
//! requests apart, by disk position. So a read's pages are placed on the disk through its file's
//! extents (FIEMAP), and the requests covering those disk bytes, issued at or after the read, are
//! the ones that brought them in: the read took from the first one's issue to the last one's
//! completion.
//!
//! FIEMAP counts from the start of the filesystem's block device, the block events from the
//! start of the whole disk: on a partitioned disk the two differ by the partition's start, which
//! the trace does not record. It is found from the trace itself: the disk offset by which most
//! reads line up exactly with the request their own process issued next ([`disk_offset`]); on a
//! disk without partitions (this project's test machine) it is 0.
//!
//! Where the requests do not cover every byte of a read, the read's disk time is unknown:
//! `None`, never a made-up zero. The trace keeps only the requests the Firefox tree issued itself
//! (trace/build.rs), and the block layer often dispatches a read from a kernel worker instead
//! (kblockd, once the queue has room): on a cold start at 8 MiB readahead here, 82 of the
//! parent's 192 reads had their requests, a third of its bytes. A file with no extents, or a
//! completion the trace did not see, is unknown too. Pure over the [`Trace`].

use std::collections::HashMap;

use super::model::{BlockRequest, Trace};

const PAGE: u64 = 4096;

/// When the disk was busy with one read: ms since the process start, like every `t`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskTime {
    /// The first request's issue to the device.
    pub issued: f64,
    /// The last request's completion.
    pub done: f64,
}

impl DiskTime {
    /// How long the read took on the disk, ms.
    #[must_use]
    pub fn ms(&self) -> f64 {
        self.done - self.issued
    }
}

/// A read's disk time as the Profiler's marker field shows it (the marker's own duration is the
/// same time; this also says when it is not known).
#[must_use]
pub fn words(time: Option<DiskTime>) -> String {
    match time {
        Some(t) => format!("{:.3} ms (block requests issued to completed)", t.ms()),
        None => "unknown (the trace holds no block request of the Firefox tree for all of this \
                 read: a kernel worker dispatched it, or its completion was not seen)"
            .to_owned(),
    }
}

/// The disk byte ranges `[start, end)` (filesystem positions) of pages `o .. o + n` of a file
/// with `extents` (`[file offset, disk byte, length]`); the part no extent maps is left out.
fn disk_ranges(extents: &[[u64; 3]], o: u64, n: u64) -> (Vec<(u64, u64)>, u64) {
    let (from, to) = (
        o.saturating_mul(PAGE),
        o.saturating_add(n).saturating_mul(PAGE),
    );
    let mut out = Vec::new();
    let mut mapped = 0;
    for &[file_off, disk, len] in extents {
        let (a, b) = (from.max(file_off), to.min(file_off.saturating_add(len)));
        if a < b {
            out.push((disk + (a - file_off), disk + (b - file_off)));
            mapped += b - a;
        }
    }
    (out, mapped)
}

/// The offset to add to a filesystem position to get the disk position the block events carry
/// (the partition's start): the difference seen most often between a read's first disk byte and
/// the position of the next request its process issued; 0 when nothing lines up.
#[must_use]
pub fn disk_offset(trace: &Trace) -> u64 {
    let mut by_process: HashMap<i32, Vec<&BlockRequest>> = HashMap::new();
    for b in &trace.block {
        by_process.entry(b.p).or_default().push(b);
    }
    for list in by_process.values_mut() {
        list.sort_by(|a, b| a.t.total_cmp(&b.t));
    }
    let mut votes: HashMap<u64, usize> = HashMap::new();
    for e in &trace.events {
        let Some(file) = trace.files.get(e.f as usize).filter(|f| !f.written) else {
            continue;
        };
        let Some(&(start, _)) = disk_ranges(&file.extents, e.o, e.n).0.first() else {
            continue;
        };
        let Some(list) = by_process.get(&e.p) else {
            continue;
        };
        let next = list.partition_point(|b| b.t < e.t);
        if let Some(b) = list.get(next).filter(|b| b.pos >= start) {
            *votes.entry(b.pos - start).or_default() += 1;
        }
    }
    votes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map_or(0, |(offset, _)| offset)
}

/// Each read's disk time (by index into `trace.events`), where the trace's block requests cover
/// all of its bytes.
#[must_use]
pub fn of_reads(trace: &Trace) -> Vec<Option<DiskTime>> {
    let offset = disk_offset(trace);
    let mut blocks: Vec<&BlockRequest> = trace.block.iter().collect();
    blocks.sort_by_key(|b| b.pos);
    let longest = blocks.iter().map(|b| b.len).max().unwrap_or(0);
    trace
        .events
        .iter()
        .map(|e| {
            let file = trace.files.get(e.f as usize).filter(|f| !f.written)?;
            let (ranges, mapped) = disk_ranges(&file.extents, e.o, e.n);
            if mapped < e.n * PAGE {
                return None;
            }
            let mut time: Option<DiskTime> = None;
            for (a, b) in ranges {
                let (a, b) = (a + offset, b + offset);
                let t = cover(&blocks, longest, a, b, e.t)?;
                time = Some(match time {
                    None => t,
                    Some(s) => DiskTime {
                        issued: s.issued.min(t.issued),
                        done: s.done.max(t.done),
                    },
                });
            }
            time
        })
        .collect()
}

/// The requests (of `blocks`, sorted by position, none longer than `longest`) issued at or
/// after `since` that together cover disk bytes `[a, b)`, the earliest first; `None` unless they
/// cover all of it and each one's completion was seen.
fn cover(blocks: &[&BlockRequest], longest: u64, a: u64, b: u64, since: f64) -> Option<DiskTime> {
    let first = blocks.partition_point(|r| r.pos.saturating_add(longest) <= a);
    let mut candidates: Vec<&BlockRequest> = blocks[first..]
        .iter()
        .take_while(|r| r.pos < b)
        .filter(|r| r.pos + r.len > a && r.t >= since)
        .copied()
        .collect();
    candidates.sort_by(|x, y| x.t.total_cmp(&y.t));
    // Take requests in issue order until the bytes are covered: a later request for the same
    // bytes is another read of them (after an evict), not this one.
    let mut covered: Vec<(u64, u64)> = Vec::new();
    let mut time: Option<DiskTime> = None;
    for r in candidates {
        let done = r.t + r.lat_ms?;
        time = Some(match time {
            None => DiskTime { issued: r.t, done },
            Some(s) => DiskTime {
                issued: s.issued.min(r.t),
                done: s.done.max(done),
            },
        });
        covered.push((r.pos.max(a), (r.pos + r.len).min(b)));
        if covers(&mut covered, a, b) {
            return time;
        }
    }
    None
}

/// Whether the ranges in `covered` (merged in place) cover `[a, b)`.
fn covers(covered: &mut [(u64, u64)], a: u64, b: u64) -> bool {
    covered.sort_unstable();
    let mut reach = a;
    for &(x, y) in covered.iter() {
        if x > reach {
            return false;
        }
        reach = reach.max(y);
        if reach >= b {
            return true;
        }
    }
    reach >= b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::{BlockRequest, Read};

    fn fixture() -> Trace {
        serde_json::from_str(include_str!(
            "../../tests/fixtures/profiler/trace-esr153-cold.json"
        ))
        .unwrap()
    }

    /// The fixture (a real cold start of ESR 153 here, cut to 26 reads and 3 block requests):
    /// read 0 is pages 4–140 of firefox-esr, file bytes 16384–577535, whose one extent starts at
    /// disk byte 12516851712; so the read lies at 12516868096, 561152 bytes: exactly block
    /// request 1 (`jq '.block[1]'`: t 1.338, pos 12516868096, len 561152, lat_ms 0.647). The
    /// others have no request in the cut fixture.
    #[test]
    fn the_fixtures_first_read_took_its_block_requests_time_and_the_rest_are_unknown() {
        let t = fixture();
        assert_eq!(disk_offset(&t), 0);
        let times = of_reads(&t);
        assert_eq!(times.len(), 26);
        let first = times[0].expect("read 0 has its request");
        assert!((first.issued - 1.338).abs() < 1e-9, "{first:?}");
        assert!((first.done - 1.985).abs() < 1e-9, "{first:?}");
        assert_eq!(times.iter().filter(|x| x.is_some()).count(), 1);
    }

    fn read(t: f64, o: u64, n: u64) -> Read {
        Read {
            t,
            f: 0,
            o,
            n,
            p: 7,
            k: "sync".into(),
            c: None,
        }
    }

    fn request(t: f64, pos: u64, len: u64, lat: Option<f64>) -> BlockRequest {
        BlockRequest {
            t,
            pos,
            len,
            lat_ms: lat,
            p: 7,
        }
    }

    /// A file at filesystem byte 1 MiB on a partition that starts 2048 sectors (1 MiB) into
    /// the disk: the requests carry disk positions 1 MiB further on.
    fn partitioned() -> Trace {
        let mut t = crate::trace::model::tests::fake();
        t.files.truncate(1);
        t.files[0].written = false;
        t.files[0].extents = vec![[0, 1 << 20, 1 << 20]];
        t.events = vec![read(10.0, 0, 4), read(20.0, 4, 8), read(30.0, 12, 4)];
        let disk = 2 << 20;
        t.block = vec![
            request(10.2, disk, 4 * PAGE, Some(1.0)),
            // Read 1 went out as two requests, the second one's completion 3 ms later.
            request(20.1, disk + 4 * PAGE, 4 * PAGE, Some(0.5)),
            request(20.2, disk + 8 * PAGE, 4 * PAGE, Some(2.9)),
            // Read 2's request was never seen complete.
            request(30.1, disk + 12 * PAGE, 4 * PAGE, None),
        ];
        t
    }

    #[test]
    fn a_partitions_start_is_found_and_a_read_spans_all_its_requests() {
        let t = partitioned();
        assert_eq!(disk_offset(&t), 1 << 20);
        let times = of_reads(&t);
        assert_eq!(
            times[0],
            Some(DiskTime {
                issued: 10.2,
                done: 11.2
            })
        );
        let second = times[1].unwrap();
        assert!((second.issued - 20.1).abs() < 1e-9 && (second.done - 23.1).abs() < 1e-9);
        assert_eq!(times[2], None, "no completion seen: unknown, not zero");
    }

    #[test]
    fn requests_that_miss_part_of_a_read_or_came_before_it_leave_it_unknown() {
        let mut t = partitioned();
        // Only half of read 1's bytes, and read 0's bytes only by a request issued before it.
        t.block.remove(2);
        t.block[0].t = 9.0;
        let times = of_reads(&t);
        assert_eq!(times[0], None);
        assert_eq!(times[1], None);
    }
}
