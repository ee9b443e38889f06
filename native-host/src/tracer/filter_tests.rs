//! The tracer's filter on real lines, recorded on this machine's kernel (6.18) by
//! `tests/fixtures/tracer/record.sh` with the three instances laid out as tracer/arm.rs makes
//! them. The expected values come from the recorded lines themselves (read with plain text
//! searches here, not with the filter's parser), and from what the script noted in `pids.txt`:
//! the tree's root shell, the `cat` that read the evicted 4 MiB file, and the task that named
//! itself `a-1 (2) [003] x` before mapping it. Its last task execs a file whose name holds a
//! newline and two forged lines.

use std::collections::HashSet;

use super::*;

const TREE: &[u8] = include_bytes!("../../tests/fixtures/tracer/tree.txt");
const EXEC: &[u8] = include_bytes!("../../tests/fixtures/tracer/exec.txt");
const SYSTEM: &[u8] = include_bytes!("../../tests/fixtures/tracer/system.txt");
const PIDS: &str = include_str!("../../tests/fixtures/tracer/pids.txt");

/// The pid the recording script noted as `what`.
fn pid(what: &str) -> i32 {
    PIDS.lines()
        .find_map(|l| l.strip_prefix(what)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{what} in pids.txt"))
}

fn lines(text: &[u8]) -> Vec<&[u8]> {
    text.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

fn has(line: &[u8], needle: &str) -> bool {
    line.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// A line's timestamp in µs, read as text (`… 603.204438: event`); a piece of a line cut by a
/// newline has none.
fn ts(line: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(line);
    let before = text.split(": ").next()?;
    let (s, us) = before.rsplit(' ').next()?.split_once('.')?;
    Some(s.parse::<u64>().ok()? * 1_000_000 + us.parse::<u64>().ok()?)
}

/// Each line with the time it was recorded at. A piece of a line cut by a newline (no time, or
/// a forged one, earlier than the line before) comes with the next real line: the line it is
/// part of, or the next one after it.
fn timed(text: &[u8]) -> Vec<(u64, &[u8])> {
    let all = lines(text);
    let mut max = 0;
    let mut times: Vec<Option<u64>> = all
        .iter()
        .map(|l| {
            let t = ts(l).filter(|t| *t >= max);
            max = max.max(t.unwrap_or(0));
            t
        })
        .collect();
    let mut next = max;
    for t in times.iter_mut().rev() {
        next = *t.get_or_insert(next);
    }
    times.into_iter().map(Option::unwrap).zip(all).collect()
}

/// The recordings through a filter as the session reads them, drain by drain (every 10 ms):
/// the tree's lines, then the execs recorded up to then, then the tree's lines handed over;
/// the system's completions with them. `tree`: the tree's lines (the recording, or one
/// planted in).
fn run_lines(
    tree: &[(u64, &[u8])],
    execs: &[(u64, &[u8])],
    still_yours: impl Fn(i32) -> bool,
) -> (Filter, Vec<String>) {
    let system = timed(SYSTEM);
    let mut f = Filter::new(&[pid("root")]);
    let mut out = Vec::new();
    let end = tree.last().map_or(0, |l| l.0) + 10_000;
    let mut from = tree.first().map_or(0, |l| l.0) / 10_000 * 10_000;
    while from <= end {
        let to = from + 10_000;
        let window = |l: &&(u64, &[u8])| l.0 >= from && l.0 < to;
        let e: Vec<&[u8]> = execs.iter().filter(window).map(|l| l.1).collect();
        f.exec_lines(&e, &mut |p| still_yours(p));
        for (_, l) in system.iter().filter(window) {
            f.system_line(l);
        }
        out.extend(tree.iter().filter(window).filter_map(|l| f.tree_line(l.1)));
        out.extend(f.matched_completions());
        from = to;
    }
    (f, out)
}

fn run(still_yours: impl Fn(i32) -> bool) -> (Filter, Vec<String>) {
    run_lines(&timed(TREE), &timed(EXEC), still_yours)
}

/// The tree's lines before the first that is not in the layout (the last task's, whose name
/// holds a newline: nothing is handed over from there on).
fn readable() -> Vec<&'static [u8]> {
    lines(TREE)
        .into_iter()
        .take_while(|l| split(l).is_some())
        .collect()
}

/// `(dev, sector)` of each recorded issue, read with a plain split of the text.
fn issues() -> Vec<(String, String)> {
    readable()
        .into_iter()
        .filter(|l| has(l, ": block_rq_issue: "))
        .map(|l| {
            let text = String::from_utf8_lossy(l);
            let payload = text.split(": block_rq_issue: ").nth(1).unwrap().to_owned();
            let words: Vec<&str> = payload.split_whitespace().collect();
            (words[0].to_owned(), words[4].to_owned())
        })
        .collect()
}

/// The lines handed over of task `tid` (its id in the kernel's `(tgid)` column).
fn of(out: &[String], tid: i32) -> usize {
    let column = format!("({tid:>7}) [");
    out.iter().filter(|l| l.contains(&column)).count()
}

#[test]
fn every_recorded_line_splits_and_a_name_that_mimics_the_layout_moves_nothing() {
    // Only the last task, whose name holds a newline (the file it exec'd is "x", a newline and
    // forged lines; a name keeps its first 15 bytes), breaks: each of its lines is cut in two
    // pieces, " x" and the rest, neither a line.
    for text in [TREE, EXEC] {
        let all = lines(text);
        let broken: Vec<usize> = (0..all.len())
            .filter(|i| split(all[*i]).is_none())
            .collect();
        assert!(!broken.is_empty());
        assert_eq!(all[broken[0]], b" x");
        assert!(all[broken[0] + 1].starts_with(b"             -"));
    }
    let named = pid("named");
    let hostile = lines(TREE)
        .into_iter()
        .find(|l| l.starts_with(format!(" a-1 (2) [003] x-{named}").as_bytes()))
        .expect("the recorded line of the task that named itself a-1 (2) [003] x");
    let h = split(hostile).unwrap();
    assert_eq!((h.tid, h.tgid), (named, Some(named)));
    assert!(!in_interrupt(h.flags));
    // A name cut by a newline leaves a fragment that is no line.
    assert!(split(b"[003] x-5060    (   5060) [000] .....  1.0: mm_filemap_fault: x").is_none());
    assert_eq!(lost_count(b"CPU:1 [LOST 42 EVENTS]"), Some(42));
    assert_eq!(lost_count(b"            CPU:1 [LOST 42 EVENTS]"), None);
}

#[test]
fn completions_in_interrupt_context_are_told_apart() {
    let mut irq = 0;
    for l in lines(SYSTEM) {
        let Some(h) = split(l) else { continue };
        // The kernel's legend above its lines: the third of the five flags after the CPU says
        // hard or soft interrupt (h, H, s) or NMI (z, Z).
        let text = String::from_utf8_lossy(l);
        let flags = text.split("] ").nth(1).unwrap().split(' ').next().unwrap();
        let soft = "hHszZ".contains(flags.chars().nth(2).unwrap());
        assert_eq!(in_interrupt(h.flags), soft, "{text}");
        irq += usize::from(soft);
    }
    assert!(irq > 0);
}

#[test]
fn page_frames_become_tokens_and_no_address_is_handed_over() {
    let (f, out) = run(|_| true);
    let recorded: Vec<String> = readable()
        .into_iter()
        .filter(|l| has(l, ": mm_filemap_add_to_page_cache: "))
        .map(|l| {
            let text = String::from_utf8_lossy(l);
            let after = text.split(" pfn=0x").nth(1).unwrap();
            after.split_whitespace().next().unwrap().to_owned()
        })
        .collect();
    let distinct: HashSet<&String> = recorded.iter().collect();
    let adds: Vec<&String> = out
        .iter()
        .filter(|l| l.contains(": mm_filemap_add_to_page_cache: "))
        .collect();
    assert!(recorded.len() > 1000, "the cat's 4 MiB");
    assert_eq!(
        adds.len(),
        recorded.len(),
        "every page-cache add of the tree is handed over"
    );
    assert_eq!(f.frames().count(), distinct.len());
    let tokens: HashSet<u64> = f.frames().map(|(_, t)| t).collect();
    assert_eq!(tokens, (1..=distinct.len() as u64).collect());
    for pfn in &distinct {
        let pfn = u64::from_str_radix(pfn, 16).unwrap();
        if pfn > distinct.len() as u64 {
            // A real frame number is far above the tokens: none of them is handed over.
            assert!(
                !out.iter().any(|l| l.contains(&format!("pfn=0x{pfn:x} "))),
                "pfn 0x{pfn:x} handed over"
            );
        }
    }
}

#[test]
fn a_file_name_with_a_newline_breaks_the_proof_and_its_forged_lines_do_nothing() {
    let forged: Vec<&[u8]> = lines(EXEC)
        .into_iter()
        .filter(|l| has(l, "pfn=0x1234") || has(l, "child_pid=1 "))
        .collect();
    assert_eq!(forged.len(), 2, "exec.txt holds the forged lines");
    assert!(
        forged.iter().all(|l| split(l).is_some()),
        "they look like lines"
    );
    let (f, out) = run(|_| true);
    assert!(
        f.broken(),
        "an exec line that is not one line ends the proof"
    );
    assert!(f.frames().all(|(pfn, _)| pfn != 0x1234));
    assert!(!out.iter().any(|l| l.contains(" ino 1 ")));
    assert_eq!(of(&out, 1), 0);
    // The forged fork, read as the tree's, would have made pid 1 of it: it never is.
    let mut g = Filter::new(&[2]);
    g.exec_lines(&forged, &mut |_| true);
    assert!(g.broken());
}

#[test]
fn a_completion_is_handed_over_only_for_an_issue_of_the_tree_and_anonymous() {
    let (_, out) = run(|_| true);
    let issued = issues();
    assert!(issued.len() >= 3, "{issued:?}");
    let completed: Vec<&String> = out
        .iter()
        .filter(|l| l.contains(": block_rq_complete: "))
        .collect();
    // Each completion handed over completes an issue of the tree (device, first sector)…
    for c in &completed {
        let payload = c.split(": block_rq_complete: ").nth(1).unwrap();
        let w: Vec<&str> = payload.split_whitespace().collect();
        assert!(issued.iter().any(|(d, s)| d == w[0] && s == w[3]), "{c}");
        // …with the interrupted task's name and pid (another user's, often) replaced.
        assert!(c.starts_with("           <irq>-0       (-------) ["), "{c}");
    }
    assert!(!completed.is_empty());
    // Completions of others' requests stay behind: the system recording has more.
    let all = lines(SYSTEM)
        .into_iter()
        .filter(|l| has(l, ": block_rq_complete: "))
        .count();
    assert!(all > completed.len());
}

/// The task a line (of an ordinary task name) is from, and the child a fork line names: plain
/// text searches.
fn task_of(line: &str) -> Option<i32> {
    line.split_whitespace()
        .next()?
        .rsplit('-')
        .next()?
        .parse()
        .ok()
}

fn child_of(line: &str) -> Option<i32> {
    line.split(" child_pid=").nth(1)?.trim().parse().ok()
}

#[test]
fn a_task_that_became_someone_else_is_dropped_with_what_it_forked() {
    let (cat, named) = (pid("cat"), pid("named"));
    let (_, all) = run(|_| true);
    assert!(of(&all, cat) > 0 && of(&all, named) > 0);
    // `cat` as if its exec had made it another user: its lines go, the named task's stay.
    let (_, out) = run(|p| p != cat);
    assert_eq!(of(&out, cat), 0);
    assert_eq!(of(&out, named), of(&all, named));
    // A task that exec'd while recorded and forked afterwards: it and every task it forked
    // (and they forked) go.
    let tree: Vec<String> = readable()
        .into_iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    let forks: Vec<(i32, i32)> = tree
        .iter()
        .filter(|l| l.contains(": sched_process_fork: "))
        .filter_map(|l| Some((task_of(l)?, child_of(l)?)))
        .collect();
    let parent = lines(EXEC)
        .into_iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .filter_map(|l| task_of(&l))
        .find(|p| *p != pid("root") && forks.iter().any(|(f, _)| f == p))
        .expect("a recorded exec of a task that forks");
    let mut gone: HashSet<i32> = HashSet::from([parent]);
    loop {
        let more: Vec<i32> = forks
            .iter()
            .filter(|(p, c)| gone.contains(p) && !gone.contains(c))
            .map(|(_, c)| *c)
            .collect();
        if more.is_empty() {
            break;
        }
        gone.extend(more);
    }
    assert!(gone.len() > 1, "it forked");
    let (_, out) = run(|p| p != parent);
    for t in &gone {
        assert_eq!(of(&out, *t), 0, "task {t}");
    }
    assert_eq!(of(&out, cat), of(&all, cat));
}

#[test]
fn an_exec_back_to_the_user_does_not_undo_one_that_made_a_task_someone_else() {
    // `cat`'s recorded exec looked at twice: as if it had made `cat` someone else (a setuid
    // program), then as if a second exec had given the user's ids back. Dropped stays dropped:
    // what it read meanwhile was another user's.
    let cat = pid("cat");
    let exec = lines(EXEC)
        .into_iter()
        .find(|l| task_of(&String::from_utf8_lossy(l)) == Some(cat))
        .expect("cat's exec in exec.txt");
    let mut f = Filter::new(&[pid("root")]);
    f.exec_lines(&[exec], &mut |_| false);
    f.exec_lines(&[exec], &mut |_| true);
    let out: Vec<String> = readable()
        .into_iter()
        .filter_map(|l| f.tree_line(l))
        .collect();
    assert_eq!(of(&out, cat), 0, "cat's lines handed over");
    assert!(of(&out, pid("named")) > 0);
}

#[test]
fn two_execs_of_a_task_in_one_read_drop_the_first_programs_lines() {
    // The named task exec'd a chain of programs (pyenv's shims, then python3) within
    // milliseconds: the look at it is of the last, so what the others did is not proven the
    // user's; the last program's lines (the mapped reads) stay.
    let named = pid("named");
    let mut f = Filter::new(&[pid("root")]);
    let all: Vec<String> = readable()
        .into_iter()
        .filter_map(|l| f.tree_line(l))
        .collect();
    let execs: Vec<&[u8]> = lines(EXEC)
        .into_iter()
        .filter(|l| split(l).is_some_and(|h| h.tid == named))
        .collect();
    assert!(execs.len() > 2, "a chain of execs");
    let (first, last) = (
        split(execs[0]).unwrap().ts,
        split(execs[execs.len() - 1]).unwrap().ts,
    );
    let mut f = Filter::new(&[pid("root")]);
    f.exec_lines(&execs, &mut |_| true);
    let out: Vec<String> = readable()
        .into_iter()
        .filter_map(|l| f.tree_line(l))
        .collect();
    let between = |l: &&String| {
        let h = split(l.as_bytes()).unwrap();
        h.tid == named && (first..=last).contains(&h.ts)
    };
    assert!(all.iter().filter(between).count() > 0);
    assert_eq!(out.iter().filter(between).count(), 0);
    assert!(of(&out, named) > 0, "the last program's lines stay");
    assert_eq!(of(&out, pid("cat")), of(&all, pid("cat")));
}

#[test]
fn a_task_number_after_its_exit_or_never_proven_follows_no_one() {
    // A stranger that got `cat`'s number after it exited (its lines, after cat's exit line), and
    // a task the tracer never proved of the tree (a root job whose number the kernel's pid
    // filter still held): the same recorded lines, none handed over.
    let cat = pid("cat");
    let tree = timed(TREE);
    let upto = tree.iter().position(|(_, l)| split(l).is_none()).unwrap();
    let cats: Vec<(u64, &[u8])> = tree[..upto]
        .iter()
        .filter(|(_, l)| split(l).is_some_and(|h| h.tid == cat))
        .filter(|(_, l)| !has(l, ": sched_process_exit: "))
        .copied()
        .collect();
    assert!(cats.len() > 100);
    let stranger: Vec<String> = cats
        .iter()
        .map(|(_, l)| {
            // The same line, of task 1 (the name and pid columns are fixed: `%16s-%-7d`).
            let rest = String::from_utf8_lossy(&l[24..]);
            format!("{:>16}-{:<7}{rest}", "stranger", 1)
        })
        .collect();
    assert!(stranger
        .iter()
        .all(|l| split(l.as_bytes()).map(|h| h.tid) == Some(1)));
    let last = tree[upto - 1].0;
    let mut planted: Vec<(u64, &[u8])> = tree[..upto].to_vec();
    planted.extend(cats.iter().map(|(_, l)| (last, *l)));
    planted.extend(stranger.iter().map(|l| (last, l.as_bytes())));
    // The execs before the last one's, whose file name breaks the proof.
    let execs: Vec<(u64, &[u8])> = timed(EXEC)
        .into_iter()
        .take_while(|(_, l)| split(l).is_some())
        .collect();
    let (_, all) = run_lines(&tree[..upto], &execs, |_| true);
    let (f, out) = run_lines(&planted, &execs, |_| true);
    assert!(!f.broken());
    assert_eq!(
        of(&out, cat),
        of(&all, cat),
        "a line after cat's exit handed over"
    );
    assert_eq!(of(&out, 1), 0);
    assert_eq!(out.len(), all.len());
}

#[test]
fn a_lost_line_ends_what_is_handed_over() {
    let tree = readable();
    let half = tree.len() / 2;
    let mut f = Filter::new(&[pid("root")]);
    let before = tree[..half].iter().filter_map(|l| f.tree_line(l)).count();
    assert!(before > 0);
    assert_eq!(f.tree_line(b"CPU:1 [LOST 3 EVENTS]"), None);
    assert!(f.broken());
    assert_eq!(
        tree[half..].iter().filter_map(|l| f.tree_line(l)).count(),
        0
    );
    assert_eq!(f.take_lost(), 3);
    // In the exec instance too: an exec may be among what was lost.
    let mut f = Filter::new(&[pid("root")]);
    f.exec_lines(&[b"CPU:0 [LOST 1 EVENTS]"], &mut |_| true);
    assert_eq!(tree.iter().filter_map(|l| f.tree_line(l)).count(), 0);
}

#[test]
fn block_keys_forks_and_execs_parse_from_the_right_place() {
    assert_eq!(
        block_key(b"254,0 RA 4096 () 500179312 + 8 be,0,4 [cat]"),
        Some((b"254,0".to_vec(), 500_179_312))
    );
    assert_eq!(
        block_key(b"254,0 RA () 500179264 + 16 be,0,4 [0]"),
        Some((b"254,0".to_vec(), 500_179_264))
    );
    assert_eq!(block_key(b"garbage"), None);
    assert_eq!(
        fork_child(b"comm=x child_pid=1 pid=5 child_comm=y child_pid=7"),
        Some(7)
    );
    assert_eq!(fork_child(b"comm=x pid=5 child_comm=y child_pid=7x"), None);
    assert_eq!(
        exec_pids(b"filename=/x pid=1 old_pid=1 pid=7 old_pid=9"),
        Some((7, 9))
    );
    assert_eq!(exec_pids(b"filename=/x pid=7 old_pid=9 "), None);
    assert_eq!(exec_pids(b"filename=/tmp/x"), None);
}

#[test]
fn a_timestamp_too_large_is_no_line() {
    // Found by the fuzzer before (a 20-digit timestamp): no overflow, no line.
    let line = b"              sh-1       (      1) [000] ..... 99999999999999999.000000: sched_process_exit: comm=sh pid=1 prio=120 group_dead=true";
    assert!(split(line).is_none());
    let mut f = Filter::new(&[1]);
    assert_eq!(f.tree_line(line), None);
    assert!(f.broken());
}
