//! `manpages DIR` (hidden): the manual pages the Debian package ships, rendered by clap_mangen
//! from the same clap definitions as `--help`, so they never drift from the program:
//! `about-startup-host.1` (every command listed) and `about-startup-host-<command>.1` for each
//! command a person runs (the hidden ones left out).

use std::path::Path;

use anyhow::Context;

/// Write the pages of `command` into `dir` (made if missing); prints each file's path.
pub(super) fn write(command: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("make {}", dir.display()))?;
    let mut command = command.clone();
    // Built, each command knows its full name (`about-startup-host-residency`, clap's display
    // name) and how it is run (`about-startup-host residency`, its bin name).
    command.build();
    page(&command, dir)?;
    // Not `help`: clap's own, the same as --help.
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        page(sub, dir)?;
    }
    Ok(())
}

fn page(command: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    let man = clap_mangen::Man::new(command.clone())
        .section("1")
        .manual("about:startup")
        .source(format!("about-startup-host {}", crate::HOST_VERSION));
    let path = dir.join(man.get_filename());
    let mut out = Vec::new();
    man.render(&mut out)?;
    std::fs::write(&path, out).with_context(|| format!("write {}", path.display()))?;
    println!("{}", path.display());
    Ok(())
}
