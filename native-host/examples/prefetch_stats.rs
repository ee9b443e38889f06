use about_startup_host::learn::prefetch::{self, Knobs, Sizes};
use std::path::Path;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let first: u64 = args.get(1).map_or(4, |s| s.parse().unwrap());
    let max: u64 = args.get(2).map_or(32, |s| s.parse().unwrap());
    let gap: u64 = args.get(3).map_or(0, |s| s.parse().unwrap());
    let chunk: u64 = args.get(4).map_or(1024, |s| s.parse().unwrap());
    let knobs = Knobs { sizes: Sizes { first: first << 20, max: max << 20 }, gap: gap << 10, chunk: chunk << 10 };
    let t = std::time::Instant::now();
    let (plan, status) = prefetch::choose(Path::new("/usr/lib/firefox-esr"), Path::new("/work/wt-22-prefetch/artifacts/state-128/about-startup"), knobs).unwrap();
    println!("{:?} in {:?}", status, t.elapsed());
    let plan = plan.unwrap();
    let mut total_reads = 0; let mut small = 0;
    for (i, b) in plan.batches.iter().enumerate() {
        let bytes: u64 = b.iter().map(|r| r.len).sum();
        let s = b.iter().filter(|r| r.len < 200*1024).count();
        total_reads += b.len(); small += s;
        let cost: f64 = b.iter().map(|r| (r.len as f64 / 31.46e6).max(1.0/150.0)).sum();
        println!("batch {i}: {} reads, {:.1} MB, {} under 200 KiB, modelled {:.2} s", b.len(), bytes as f64/1e6, s, cost);
    }
    let cost: f64 = plan.batches.iter().flatten().map(|r| (r.len as f64 / 31.46e6).max(1.0/150.0)).sum();
    println!("total {} reads, {} small, {:.1} MB, modelled {:.2} s", total_reads, small, plan.bytes_planned as f64/1e6, cost);
}
