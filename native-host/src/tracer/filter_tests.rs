//! The tracer's filter on real lines, recorded on this machine's kernel (6.18) by
//! `tests/fixtures/tracer/record.sh` with the two instances laid out as tracer/arm.rs makes them.
//! The expected values come from the recorded lines themselves (read with plain text searches
//! here, not with the filter's parser), and from what the script noted in `pids.txt`: the
//! tree's root shell, the `cat` that read the evicted 4 MiB file, and the task that named itself
//! `a-1 (2) [003] x` before mapping it.

use std::collections::HashSet;

use super::*;

const TREE: &[u8] = include_bytes!("../../tests/fixtures/tracer/tree.txt");
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

/// Run both recordings through a filter the way the session does for one drain.
fn run(still_yours: impl Fn(i32) -> bool) -> (Filter, Vec<String>) {
    run_in_order(still_yours, true)
}

/// …with the tree's forks learned before the system's execs are read, or after (the session
/// reads the system instance as soon as it has a line, so an exec may come before its fork).
fn run_in_order(still_yours: impl Fn(i32) -> bool, forks_first: bool) -> (Filter, Vec<String>) {
    let tree = lines(TREE);
    let mut f = Filter::new(&[pid("root")], &[]);
    if forks_first {
        f.learn_forks(&tree);
    }
    for l in lines(SYSTEM) {
        f.system_line(l, &mut |p| still_yours(p));
    }
    if !forks_first {
        f.learn_forks(&tree);
    }
    let mut out: Vec<String> = tree.iter().filter_map(|l| f.tree_line(l)).collect();
    out.extend(f.matched_completions());
    (f, out)
}

/// `(dev, sector)` of each recorded issue, read with a plain split of the text.
fn issues() -> Vec<(String, String)> {
    lines(TREE)
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

#[test]
fn every_recorded_line_splits_and_a_name_that_mimics_the_layout_moves_nothing() {
    // Only the task whose name holds a newline breaks (the exec of the file whose name is "x",
    // a newline and a forged line; a name keeps its first 15 bytes): each of its lines is cut in
    // two pieces, " x" and the rest, neither a line. The forged line in the rest of the file's
    // name (system.txt, in its exec) is, as text, a line.
    for text in [TREE, SYSTEM] {
        let all = lines(text);
        let broken: Vec<usize> = (0..all.len())
            .filter(|i| split(all[*i]).is_none())
            .collect();
        assert!(!broken.is_empty());
        for pair in broken.chunks(2) {
            assert_eq!(all[pair[0]], b" x");
            assert_eq!(pair[1], pair[0] + 1);
            assert!(all[pair[1]].starts_with(b"             -"));
        }
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
        // hard or soft interrupt (h, H, s) or NMI (z, Z); recorded here: "..s..", "..s1.".
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
    let recorded: Vec<String> = lines(TREE)
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
    assert_eq!(
        adds.len(),
        recorded.len(),
        "every page-cache add is handed over"
    );
    assert_eq!(f.frames().count(), distinct.len());
    let tokens: HashSet<u64> = f.frames().map(|(_, t)| t).collect();
    assert_eq!(tokens, (1..=distinct.len() as u64).collect());
    for pfn in &distinct {
        let pfn = u64::from_str_radix(pfn, 16).unwrap();
        let token = f.frames().find(|(p, _)| *p == pfn).unwrap().1;
        if pfn > distinct.len() as u64 {
            // A real frame number is far above the tokens: none of them is handed over.
            assert!(
                !out.iter().any(|l| l.contains(&format!("pfn=0x{pfn:x} "))),
                "pfn 0x{pfn:x} handed over"
            );
        }
        assert!(token <= distinct.len() as u64);
    }
}

#[test]
fn a_line_forged_in_an_exec_file_name_gives_no_page_frame() {
    let forged = lines(SYSTEM)
        .into_iter()
        .find(|l| has(l, "pfn=0x1234"))
        .expect("system.txt holds the forged line");
    assert!(split(forged).is_some(), "it looks like a line");
    let (f, out) = run(|_| true);
    assert!(f.frames().all(|(pfn, _)| pfn != 0x1234));
    assert!(!out.iter().any(|l| l.contains(" ino 1 ")));
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
    // …and every issue whose completion was recorded has it.
    let recorded_complete = |(d, s): &(String, String)| {
        lines(SYSTEM).into_iter().any(|l| {
            let t = String::from_utf8_lossy(l);
            t.contains(": block_rq_complete: ")
                && t.contains(&format!(": {d} "))
                && t.contains(&format!(") {s} + "))
        })
    };
    let distinct: HashSet<&(String, String)> =
        issued.iter().filter(|i| recorded_complete(i)).collect();
    assert_eq!(completed.len(), distinct.len(), "{completed:#?}");
    // Completions of others' requests stay behind: the system recording has more.
    let all = lines(SYSTEM)
        .into_iter()
        .filter(|l| has(l, ": block_rq_complete: "))
        .count();
    assert!(all > completed.len());
    // No task name but the tree's and `<irq>` is in what is handed over.
    let tree_names: HashSet<String> = lines(TREE)
        .into_iter()
        .filter_map(|l| Some(String::from_utf8_lossy(l.get(..16)?).trim().to_owned()))
        .collect();
    for c in &completed {
        let name = c[..16].trim();
        assert!(name == "<irq>" || tree_names.contains(name), "{c}");
    }
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
    // A process's lines: its id in the kernel's `(tgid)` column before the CPU.
    let tids = |out: &[String], tid: i32| {
        let column = format!("({tid:>7}) [");
        out.iter().filter(|l| l.contains(&column)).count()
    };
    let (cat, named) = (pid("cat"), pid("named"));
    let (_, all) = run(|_| true);
    assert!(tids(&all, cat) > 0 && tids(&all, named) > 0);
    // `cat` as if its exec had made it another user: its lines go, the named task's stay,
    // whether its exec was read before its fork or after.
    for forks_first in [true, false] {
        let (_, out) = run_in_order(|p| p != cat, forks_first);
        assert_eq!(tids(&out, cat), 0, "forks first: {forks_first}");
        assert_eq!(tids(&out, named), tids(&all, named));
    }
    // A task that exec'd while recorded and forked afterwards: it and every task it forked
    // (and they forked) go.
    let tree: Vec<String> = lines(TREE)
        .into_iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    let forks: Vec<(i32, i32)> = tree
        .iter()
        .filter(|l| l.contains(": sched_process_fork: "))
        .filter_map(|l| Some((task_of(l)?, child_of(l)?)))
        .collect();
    let parent = lines(SYSTEM)
        .into_iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .filter(|l| l.contains(": sched_process_exec: "))
        .filter_map(|l| task_of(&l))
        .find(|p| forks.iter().any(|(f, _)| f == p))
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
        assert_eq!(tids(&out, *t), 0, "task {t}");
    }
    assert_eq!(tids(&out, cat), tids(&all, cat));
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
}

#[test]
fn an_exec_back_to_the_user_does_not_undo_one_that_made_a_task_someone_else() {
    // `cat`'s recorded exec, read before its fork (the two instances are read apart), looked
    // at twice: as if it had made `cat` someone else (a setuid program), then as if a second
    // exec had given the user's ids back. Dropped stays dropped, as for a task already known to
    // be of the tree: what it read meanwhile was another user's.
    let cat = pid("cat");
    let exec = lines(SYSTEM)
        .into_iter()
        .find(|l| {
            let text = String::from_utf8_lossy(l);
            text.contains(": sched_process_exec: ") && task_of(&text) == Some(cat)
        })
        .expect("cat's exec in system.txt");
    let tree = lines(TREE);
    let mut f = Filter::new(&[pid("root")], &[]);
    f.system_line(exec, &mut |_| false);
    f.system_line(exec, &mut |_| true);
    f.learn_forks(&tree);
    let column = format!("({cat:>7}) [");
    let (_, all) = run(|_| true);
    assert!(all.iter().any(|l| l.contains(&column)), "cat read");
    let out: Vec<String> = tree.iter().filter_map(|l| f.tree_line(l)).collect();
    assert!(
        !out.iter().any(|l| l.contains(&column)),
        "cat's lines handed over"
    );
}
