//! Tests of the syscall wrappers, on real files of this machine.

use super::*;
use std::io::Write;
use std::os::unix::fs::FileExt;

#[test]
fn id_maps_of_the_initial_namespace_and_of_a_rootless_container() {
    let full = "         0          0 4294967295\n";
    assert_eq!(IdMaps::parse(full, full, 65534, 65534), None);
    // unshare -Ur as nobody: inside root is outside 65534; nothing else is mapped.
    let one = "         0      65534          1\n";
    let m = IdMaps::parse(one, one, 65534, 65534).unwrap();
    assert!(m.maps(0, 0));
    assert!(
        !m.maps(65534, 65534),
        "a root-owned file shows as the overflow id"
    );
    assert!(!m.maps(0, 5));
    // podman: 0 -> 1000, 1..65537 -> 100000..; the overflow id stays unmapped in doubt.
    let podman = "0 1000 1\n1 100000 65536\n";
    let m = IdMaps::parse(podman, podman, 65534, 65534).unwrap();
    assert!(m.maps(0, 0) && m.maps(1000, 1000) && m.maps(65536, 65536));
    assert!(!m.maps(65534, 0) && !m.maps(70000, 0));
}

#[test]
fn cap_eff_parses_status() {
    let status = "Name:\tcat\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n";
    assert_eq!(cap_eff(status), Some(0x1ff_feff_ffff));
    assert_eq!(cap_eff("Name: x\n"), None);
    assert_eq!(
        cap_eff("CapEff:\t0000000000000000\n").map(|c| c & 8),
        Some(0)
    );
}

#[test]
fn dev_numbers_match_glibc() {
    // 254:0 (vda) and 259:65537 (a large minor).
    assert_eq!(dev_major_minor(0xfe00), (254, 0));
    let dev = (259u64 & 0xfff) << 8 | (65537u64 & 0xff) | ((65537u64 & !0xff) << 12);
    assert_eq!(dev_major_minor(dev), (259, 65537));
}

#[test]
fn mincore_of_empty_and_fresh_file() {
    let mut f = tempfile::tempfile().unwrap();
    let mut vec = vec![1u8; 3];
    mincore_file(&f, 0, &mut vec).unwrap();
    assert!(vec.is_empty());
    f.write_all(&vec![7u8; 3 * page_size() + 1]).unwrap();
    mincore_file(&f, 3 * page_size() as u64 + 1, &mut vec).unwrap();
    // Just written through the page cache: all 4 pages are there (we own the file: exact).
    assert_eq!(vec.len(), 4);
    assert!(vec.iter().all(|b| b & 1 == 1));
}

#[test]
fn cachestat_counts_what_mincore_sees() {
    // A file wholly cached, then dropped (tmpfs keeps it: the counts still agree), then two
    // of its eight pages read back. cachestat's count must be mincore's each time.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let page = page_size();
    std::fs::write(&path, vec![7u8; 8 * page]).unwrap();
    let f = File::open(&path).unwrap();
    f.sync_all().unwrap();
    let len = 8 * page as u64;
    let mut vec = Vec::new();
    let mut check = |f: &File| {
        mincore_file(f, len, &mut vec).unwrap();
        let seen = vec.iter().filter(|b| *b & 1 == 1).count() as u64;
        match cached_pages(f, len).unwrap() {
            Some(n) => assert_eq!(n, seen),
            None => assert!(!cachestat_available()),
        }
        seen
    };
    assert_eq!(check(&f), 8);
    fadvise(&f, 0, 0, Advice::DontNeed).unwrap();
    let dropped = check(&f);
    let mut buf = vec![0u8; 2 * page];
    f.read_exact_at(&mut buf, 3 * page as u64).unwrap();
    let partly = check(&f);
    assert!(partly >= 2 && partly >= dropped, "{dropped} then {partly}");
    assert_eq!(cached_pages(&f, 0).unwrap(), Some(0));
}

#[test]
fn fiemap_of_a_written_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![7u8; 3 * 1024 * 1024]).unwrap();
    let f = File::open(&path).unwrap();
    f.sync_all().unwrap();
    match fiemap(&f) {
        Ok(extents) => {
            assert!(!extents.is_empty());
            let covered: u64 = extents.iter().map(|e| e.length).sum();
            assert!(covered >= 3 * 1024 * 1024, "{extents:?}");
            assert_eq!(extents[0].logical, 0);
        }
        // tmpfs and friends have no FIEMAP: the caller falls back to file order.
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{e}"),
    }
}

#[test]
fn u32_halves_of_words() {
    let mut buf = vec![0u64; 4];
    set_u32(&mut buf, 20, 7);
    set_u32(&mut buf, 24, 9);
    assert_eq!((get_u32(&buf, 20), get_u32(&buf, 24)), (7, 9));
}

#[test]
fn probes_do_not_fail() {
    assert!(page_size() >= 4096);
    assert!(clk_tck() > 0);
    assert!(!kernel_release().is_empty());
    let _ = cachestat_available();
}
