//! `manpages DIR` (hidden): the manual pages the Debian package ships, rendered by clap_mangen
//! from the same clap definitions as `--help`, so they never drift from the program:
//! `about-startup-host.1` (every command listed) and `about-startup-host-<command>[-<sub>].1` for
//! each command a person runs, at every depth (`trace export`, `autostart enable`: a page lists
//! its subcommands as `about-startup-host-trace-export(1)`, so each of those has its page too;
//! issue 39 #9), the hidden ones and clap's own `help` left out.
//!
//! A page names the project's documents as the package ships them: `docs/X` in a help text is
//! `/usr/share/doc/about-startup/X` in the page, and scripts/package.mjs ships every document
//! the pages name there (it reads them from the pages, [`SHIPPED_DOCS`]).

use std::path::Path;

use anyhow::Context;

/// Where the Debian package puts the documents the pages name (scripts/package.mjs).
pub(super) const SHIPPED_DOCS: &str = "/usr/share/doc/about-startup/";

/// Write the pages of `command` into `dir` (made if missing); prints each file's path.
pub(super) fn write(command: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("make {}", dir.display()))?;
    for (name, text) in render(command)? {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

/// Every page of `command`: (file name, roff text).
fn render(command: &clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    // Not `help`: clap's own, the same as --help; without it, no page lists a page that is not.
    let mut command = without_help(command.clone());
    // Built, each command knows its full name (`about-startup-host-trace-export`, clap's display
    // name) and how it is run (`about-startup-host trace export`, its bin name).
    command.build();
    let mut pages = Vec::new();
    pages_of(&command, &mut pages)?;
    Ok(pages)
}

fn without_help(command: clap::Command) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names
        .into_iter()
        .fold(command.disable_help_subcommand(true), |command, name| {
            command.mut_subcommand(name, without_help)
        })
}

fn pages_of(command: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
    pages.push(page(command)?);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages_of(sub, pages)?;
    }
    Ok(())
}

fn page(command: &clap::Command) -> anyhow::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(command.clone())
        .section("1")
        .manual("about:startup")
        .source(format!("about-startup-host {}", crate::HOST_VERSION));
    let mut out = Vec::new();
    man.render(&mut out)?;
    let text = String::from_utf8(out).context("a manual page that is not UTF-8")?;
    Ok((man.get_filename(), shipped_docs(&text).into_bytes()))
}

/// `text` with each `docs/X` (the source tree's) as the package ships it: `SHIPPED_DOCS` + X,
/// its hyphens escaped as roff wants them in a path. Pure.
fn shipped_docs(text: &str) -> String {
    text.replace("docs/", &SHIPPED_DOCS.replace('-', "\\-"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The names `NAME(1)` a page refers to.
    fn references(text: &str) -> BTreeSet<String> {
        let text = text.replace("\\-", "-");
        let mut out = BTreeSet::new();
        for (at, _) in text.match_indices("(1)") {
            let name: String = text[..at]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
        out
    }

    /// The documents (paths under `SHIPPED_DOCS`) a page names.
    fn documents(text: &str) -> BTreeSet<String> {
        let text = text.replace("\\-", "-");
        text.match_indices(SHIPPED_DOCS)
            .map(|(at, _)| {
                text[at + SHIPPED_DOCS.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "-_./".contains(*c))
                    .collect::<String>()
                    .trim_end_matches(['.', ')'])
                    .to_owned()
            })
            .collect()
    }

    /// Issue 39 #9: the pages referred to `about-startup-host-trace-export(1)`, `-trace-list(1)`,
    /// `-autostart-enable(1)` ("No manual entry") and to docs/ files the package did not ship.
    /// Every page a page names is one of the pages, and every document it names is one the
    /// package ships (scripts/package.mjs ships what the pages name, from docs/ of this tree).
    #[test]
    fn every_reference_of_every_page_resolves() {
        let name = crate::invocation::NAME;
        let pages = render(&super::super::cli_command(name, &format!("sudo {name}"))).unwrap();
        let files: BTreeSet<String> = pages.iter().map(|(f, _)| f.clone()).collect();
        for wanted in [
            "about-startup-host.1",
            "about-startup-host-trace.1",
            "about-startup-host-trace-export.1",
            "about-startup-host-trace-list.1",
            "about-startup-host-autostart-enable.1",
        ] {
            assert!(files.contains(wanted), "{wanted} among {files:?}");
        }
        assert!(
            !files
                .iter()
                .any(|f| f.contains("-help") || f.contains("manpages")),
            "neither clap's help nor the hidden commands get a page: {files:?}"
        );
        let docs_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        let mut named_docs = BTreeSet::new();
        for (file, text) in &pages {
            let text = String::from_utf8_lossy(text);
            for reference in references(&text) {
                assert!(
                    files.contains(&format!("{reference}.1")),
                    "{file} refers to {reference}(1), which is no page"
                );
            }
            assert!(
                !text.replace("\\-", "-").contains(" docs/") && !text.contains("(docs/"),
                "{file} names a document by its place in the source tree"
            );
            for doc in documents(&text) {
                assert!(
                    docs_root.join(&doc).is_file(),
                    "{file} names {SHIPPED_DOCS}{doc}, which is not docs/{doc} of this tree"
                );
                named_docs.insert(doc);
            }
        }
        assert!(
            named_docs.contains("PROTOCOL.md"),
            "the main page names the protocol: {named_docs:?}"
        );
    }
}
