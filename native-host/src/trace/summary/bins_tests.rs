//! The charts' bins, on a small trace whose figures can be counted by hand, and on a real one.

use super::*;
use crate::trace::model::tests::fake;
use crate::trace::model::{BlockRequest, Read, Sample, Section};

fn read(t: f64, f: u32, o: u64, n: u64, k: &str) -> Read {
    Read {
        t,
        f,
        o,
        n,
        p: 10,
        k: k.into(),
        c: None,
    }
}

/// libxul.so: 10 pages, sections .rela.dyn (2 pages), .text (6), .comment (10 bytes), one extent
/// at disk byte 1 MiB; its reads: page 0 at 5 ms, pages 8-9 at 95 ms (a fault).
fn small() -> Trace {
    let mut t = fake();
    t.files[0].sections = vec![
        Section {
            name: ".rela.dyn".into(),
            offset: 0,
            size: 8192,
        },
        Section {
            name: ".text".into(),
            offset: 8192,
            size: 24576,
        },
        Section {
            name: ".comment".into(),
            offset: 40900,
            size: 10,
        },
    ];
    t.files[0].extents = vec![[0, 1_048_576, 40960]];
    t.events = vec![
        read(5.0, 0, 0, 1, "sync"),
        read(95.0, 0, 8, 2, "fault"),
        read(10.0, 1, 0, 1, "read"),
        read(20.0, 2, 0, 1, "sync"),
    ];
    t.samples = vec![
        Sample {
            t: 10.0,
            read_bytes: 4096,
            majflt: 0,
        },
        Sample {
            t: 60.0,
            read_bytes: 12288,
            majflt: 1,
        },
    ];
    t
}

#[test]
fn the_span_ends_at_the_start_not_at_later_milestones_or_the_quiet_end() {
    let mut t = small();
    t.ended_ms = 3100.0;
    assert_eq!(
        last_read_ms(&t),
        Some(95.0),
        "the last read, not the written file's event"
    );
    // The viewer's axis end (sessionRestored at 80) is before the last read: the read wins.
    assert_eq!(span(&t, Some(80.0)), 95.0);
    assert_eq!(span(&t, Some(900.0)), 900.0);
    assert_eq!(span(&t, None), 95.0);
    let mut empty = small();
    empty.events.clear();
    empty.samples.clear();
    empty.ended_ms = 3100.0;
    assert_eq!(last_read_ms(&empty), None);
    assert_eq!(
        span(&empty, None),
        3100.0,
        "nothing read: the recording's end"
    );
    let mut sampled = small();
    sampled.events.clear();
    assert_eq!(
        last_read_ms(&sampled),
        Some(60.0),
        "the last sample in which read_bytes grew"
    );
}

#[test]
fn read_over_time_leaves_written_files_out_and_falls_back_to_samples() {
    let r = read_over_time(&small(), 100.0, 10);
    assert_eq!(r.source, "events");
    let bytes: Vec<u64> = r.bins.iter().map(|b| b.bytes).collect();
    assert_eq!(
        bytes,
        [4096, 0, 4096, 0, 0, 0, 0, 0, 0, 8192],
        "the written file's page at 10 ms is no read"
    );
    assert_eq!(r.total, 4 * 4096);
    assert_eq!(r.max, 8192);
    assert_eq!(r.bins[9].cumulative, r.total);
    assert_eq!((r.bins[9].t0, r.bins[9].t1), (90.0, 100.0));
    let mut sampled = small();
    sampled.events.clear();
    let s = read_over_time(&sampled, 100.0, 10);
    assert_eq!(s.source, "samples");
    assert_eq!((s.bins[1].bytes, s.bins[6].bytes), (4096, 8192));
}

#[test]
fn the_access_pattern_counts_a_read_in_every_row_its_bytes_cover() {
    let p = pattern(&small(), 0, 100.0, 10, 10).unwrap();
    assert_eq!(p.reads, 2);
    assert_eq!(p.size, 40960);
    assert_eq!(p.cells, [(0, 0, 1), (9, 8, 1), (9, 9, 1)]);
    assert_eq!(p.marks, [Mark::Window, Mark::Fault, Mark::Fault]);
    // A 3-page file drawn in 100 rows: its first page covers the top third, not one row.
    let mut t = small();
    t.files[2].size = Some(3 * 4096);
    let p = pattern(&t, 2, 100.0, 10, 100).unwrap();
    let rows: Vec<u32> = p.cells.iter().map(|c| c.1).collect();
    assert_eq!(rows, (0..34).collect::<Vec<_>>());
    assert!(pattern(&t, 9, 100.0, 10, 10).is_none());
}

#[test]
fn the_access_pattern_stays_a_bounded_grid() {
    let mut t = small();
    t.files[0].size = Some(75_000 * 4096);
    #[allow(clippy::cast_precision_loss)]
    let events = (0..75_000u64)
        .map(|i| read(i as f64 / 1000.0, 0, i, 1, "sync"))
        .collect();
    t.events = events;
    let p = pattern(&t, 0, 75.0, 160, 100).unwrap();
    assert!(p.cells.len() <= 160 * 100);
    assert_eq!(
        p.cells.iter().map(|c| c.2).sum::<u64>(),
        75_000,
        "every page counted once"
    );
}

#[test]
fn a_cell_is_a_fault_when_most_of_its_pages_came_without_a_window() {
    let mut t = small();
    t.events = vec![read(1.0, 0, 0, 3, "fault"), read(1.0, 0, 0, 3, "sync")];
    assert_eq!(
        pattern(&t, 0, 100.0, 1, 1).unwrap().marks,
        [Mark::Window],
        "half is not most"
    );
    t.events.push(read(1.0, 0, 0, 1, "read"));
    assert_eq!(
        pattern(&t, 0, 100.0, 1, 1).unwrap().marks,
        [Mark::Fault],
        "faults and reads seen neither way count together"
    );
}

#[test]
fn large_and_named_sections_are_shaded() {
    let t = small();
    let b = bands(&t.files[0], 0.02);
    assert_eq!(
        b.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
        [".rela.dyn", ".text"]
    );
    assert_eq!((b[1].from, b[1].to), (0.2, 0.8));
    assert!(bands(&t.files[2], 0.02).is_empty(), "no size, no bands");
}

#[test]
fn the_text_map_is_the_tenth_of_the_span_each_part_was_first_read() {
    let p = pattern(&small(), 0, 100.0, 10, 10).unwrap();
    assert_eq!(text_map(&p), "0.......99");
}

#[test]
fn the_disk_view_places_reads_through_extents_and_block_requests_win() {
    let v = disk(&small(), 100.0, 10, 10);
    assert_eq!(v.source, "extents");
    assert_eq!(v.min, 1_048_576);
    assert_eq!(v.cells.len(), 2);
    let mut few = small();
    few.block = vec![BlockRequest {
        t: 1.0,
        pos: 0,
        len: 4096,
        lat_ms: Some(1.0),
        p: 10,
    }];
    assert_eq!(
        disk(&few, 100.0, 10, 10).source,
        "extents",
        "block requests under half the reads"
    );
    let mut with = small();
    with.traced_read_bytes = 12288;
    with.block = vec![
        BlockRequest {
            t: 1.0,
            pos: 0,
            len: 4096,
            lat_ms: Some(1.0),
            p: 10,
        },
        BlockRequest {
            t: 2.0,
            pos: 100 << 20,
            len: 4096,
            lat_ms: Some(2.0),
            p: 10,
        },
        BlockRequest {
            t: 3.0,
            pos: (100 << 20) + 4096,
            len: 4096,
            lat_ms: Some(1.0),
            p: 10,
        },
    ];
    let b = disk(&with, 100.0, 10, 10);
    assert_eq!(b.source, "block");
    assert_eq!(b.seeks, 1);
}
