//! How `pack` asks mksquashfs for an image (pure): the options, their checks, the argument list
//! and the `-sort` file from the traced start. Running it is learn/pack/mod.rs's.

use std::ffi::OsString;
use std::path::Path;

use anyhow::bail;

/// How `pack` builds.
#[derive(Debug, Clone)]
pub struct Options {
    pub compressor: String,
    /// mksquashfs's `-Xcompression-level` (gzip, lzo, zstd), or the compressor's own default.
    pub level: Option<u32>,
    pub block_size: u32,
    /// Order the image by the traced start (mksquashfs `-sort`).
    pub sort: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            compressor: "zstd".to_owned(),
            level: default_level("zstd"),
            block_size: 128 * 1024,
            sort: true,
        }
    }
}

impl Options {
    /// Refuse what mksquashfs must never be asked for, before anything runs: a compressor
    /// outside [`COMPRESSORS`], a level the compressor does not take, a block size that is not a
    /// power of two from 4 KiB to 1 MiB. Pure.
    pub fn check(&self) -> anyhow::Result<()> {
        if !COMPRESSORS.contains(&self.compressor.as_str()) {
            bail!(
                "unknown compressor {:?}: one of {}",
                self.compressor,
                COMPRESSORS.join(", ")
            );
        }
        if let Some(level) = self.level {
            match levels(&self.compressor) {
                Some(range) if range.contains(&level) => {}
                Some(range) => bail!(
                    "{} takes levels {} to {}, not {level}",
                    self.compressor,
                    range.start(),
                    range.end()
                ),
                None => bail!("{} takes no level", self.compressor),
            }
        }
        if !self.block_size.is_power_of_two() || !(4096..=1 << 20).contains(&self.block_size) {
            bail!(
                "block size {} is not a power of two from 4 KiB to 1 MiB",
                self.block_size
            );
        }
        Ok(())
    }

    /// mksquashfs's arguments that pack `install_dir` into `image`, its files ordered by
    /// `sort_file` (`-sort`, [`sort_lines`]): no xattrs, quiet, the compressor, its level where
    /// one is set, the block size. For options that passed [`Options::check`]. Pure.
    #[must_use]
    pub fn argv(&self, install_dir: &Path, image: &Path, sort_file: &Path) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![install_dir.into(), image.into()];
        argv.extend(
            [
                "-noappend",
                "-no-xattrs",
                "-no-progress",
                "-quiet",
                "-comp",
                &self.compressor,
                "-b",
                &self.block_size.to_string(),
                "-sort",
            ]
            .map(OsString::from),
        );
        argv.push(sort_file.into());
        if let Some(level) = self.level {
            argv.push("-Xcompression-level".into());
            argv.push(level.to_string().into());
        }
        argv
    }
}

/// The compressors mksquashfs is asked for (a word outside this list is refused, never passed on).
pub const COMPRESSORS: [&str; 6] = ["gzip", "lzo", "lz4", "xz", "zstd", "lzma"];

/// zstd's level when none is asked for. mksquashfs's own default is 15; at 19 the traced start of
/// ESR 153 needs 0.7% fewer image bytes, for about 3x the build CPU once per Firefox update
/// (docs/design/compressed.md, "Why zstd, 128 KiB blocks").
pub const ZSTD_LEVEL: u32 = 19;

/// The level `pack` asks for when none is given: [`ZSTD_LEVEL`] for zstd, else the compressor's
/// own. Pure.
#[must_use]
pub fn default_level(compressor: &str) -> Option<u32> {
    (compressor == "zstd").then_some(ZSTD_LEVEL)
}

/// The levels mksquashfs takes for `compressor` (`-Xcompression-level`), `None` where it takes
/// none. Pure.
#[must_use]
pub fn levels(compressor: &str) -> Option<std::ops::RangeInclusive<u32>> {
    match compressor {
        "gzip" | "lzo" => Some(1..=9),
        "zstd" => Some(1..=22),
        _ => None,
    }
}

/// `mksquashfs -sort` lines for `files` (install-relative path, first-use time ms): the earlier
/// a file was first needed, the higher its priority, so the image holds the start's files in the
/// order it reads them. Names mksquashfs's sort file cannot carry (white space) keep the default.
#[must_use]
pub fn sort_lines(mut files: Vec<(String, f64)>) -> String {
    files.retain(|(p, t)| !p.is_empty() && !p.chars().any(char::is_whitespace) && t.is_finite());
    files.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    files
        .iter()
        .take(32_000)
        .enumerate()
        .map(|(i, (p, _))| format!("{p} {}\n", 32_000 - i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sort_file_puts_the_first_needed_first() {
        let lines = sort_lines(vec![
            ("browser/omni.ja".into(), 300.0),
            ("libxul.so".into(), 12.5),
            ("with space.so".into(), 1.0),
            ("never.so".into(), f64::INFINITY),
            ("omni.ja".into(), 12.5),
        ]);
        assert_eq!(
            lines,
            "libxul.so 32000\nomni.ja 31999\nbrowser/omni.ja 31998\n"
        );
    }

    #[test]
    fn mksquashfs_is_asked_for_the_compressor_its_level_and_the_block_size_and_nothing_else() {
        let argv = |opts: &Options| {
            opts.argv(
                Path::new("/usr/lib/firefox-esr"),
                Path::new("/s/pack/firefox.squashfs.new"),
                Path::new("/s/pack/sort.txt"),
            )
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect::<Vec<_>>()
            .join(" ")
        };
        assert_eq!(
            argv(&Options::default()),
            "/usr/lib/firefox-esr /s/pack/firefox.squashfs.new -noappend -no-xattrs -no-progress -quiet -comp zstd -b 131072 -sort /s/pack/sort.txt -Xcompression-level 19"
        );
        let lz4 = Options {
            compressor: "lz4".into(),
            level: None,
            block_size: 1 << 20,
            sort: false,
        };
        assert!(lz4.check().is_ok());
        assert_eq!(
            argv(&lz4),
            "/usr/lib/firefox-esr /s/pack/firefox.squashfs.new -noappend -no-xattrs -no-progress -quiet -comp lz4 -b 1048576 -sort /s/pack/sort.txt"
        );
    }

    #[test]
    fn unknown_compressors_levels_and_odd_block_sizes_are_refused() {
        let refused = |opts: Options| opts.check().unwrap_err().to_string();
        assert!(refused(Options {
            compressor: "-e /etc".into(),
            ..Options::default()
        })
        .contains("unknown compressor"));
        assert!(refused(Options {
            block_size: 100_000,
            ..Options::default()
        })
        .contains("power of two"));
        assert!(refused(Options {
            block_size: 2 << 20,
            ..Options::default()
        })
        .contains("power of two"));
        assert!(refused(Options {
            compressor: "lz4".into(),
            level: Some(9),
            ..Options::default()
        })
        .contains("lz4 takes no level"));
        assert_eq!(
            refused(Options {
                level: Some(23),
                ..Options::default()
            }),
            "zstd takes levels 1 to 22, not 23"
        );
        assert!(Options::default().check().is_ok());
        assert_eq!(
            (default_level("zstd"), default_level("lzo")),
            (Some(ZSTD_LEVEL), None)
        );
    }
}
