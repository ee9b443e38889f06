//! Desktop entry files (freedesktop.org Desktop Entry Specification 1.5), pure: reading a key
//! of a group, splitting an `Exec` value into its arguments, and writing a copy of an entry
//! whose every `Exec` runs Firefox through the host. Everything else of the system's entry is
//! kept line for line (names, translations, icon, MIME types, actions, StartupWMClass), so the
//! desktop treats the copy as the same Firefox.

/// The key our copies carry, so `disable` removes only what `enable` wrote.
pub const MARKER_KEY: &str = "X-About-Startup-Prefetch";

/// The value of `key` (no locale) in `group` (e.g. "Desktop Entry"), as written (not unescaped).
#[must_use]
pub fn value<'a>(text: &'a str, group: &str, key: &str) -> Option<&'a str> {
    let mut current = None;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(name) = group_name(line) {
            current = Some(name);
        } else if current == Some(group) {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim_end() == key {
                    return Some(v.trim_start());
                }
            }
        }
    }
    None
}

fn group_name(line: &str) -> Option<&str> {
    line.strip_prefix('[')?.strip_suffix(']')
}

/// Whether `text` is an entry `enable` wrote.
#[must_use]
pub fn is_ours(text: &str) -> bool {
    value(text, "Desktop Entry", MARKER_KEY) == Some("true")
}

/// An `Exec` value split into arguments: the string-level escapes (`\s`, `\n`, `\t`, `\r`,
/// `\\`) undone, then the quoting (double quotes, inside which `\"`, `` \` ``, `\$`, `\\`
/// escape). `None` for an unterminated quote. Field codes (`%u`) stay as they are.
#[must_use]
pub fn split_exec(value: &str) -> Option<Vec<String>> {
    let mut unescaped = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            unescaped.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => unescaped.push(' '),
            Some('n') => unescaped.push('\n'),
            Some('t') => unescaped.push('\t'),
            Some('r') => unescaped.push('\r'),
            Some('\\') | None => unescaped.push('\\'),
            Some(other) => {
                unescaped.push('\\');
                unescaped.push(other);
            }
        }
    }
    let mut args = Vec::new();
    let mut arg: Option<String> = None;
    let mut chars = unescaped.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if let Some(a) = arg.take() {
                    args.push(a);
                }
            }
            '"' => {
                let a = arg.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => a.push(chars.next()?),
                        other => a.push(other),
                    }
                }
            }
            other => arg.get_or_insert_with(String::new).push(other),
        }
    }
    if let Some(a) = arg {
        args.push(a);
    }
    Some(args)
}

/// One argument as an `Exec` value writes it: quoted where the specification's reserved
/// characters appear, then string-escaped. A field code (`%u`, `%U`, …) stays bare.
#[must_use]
pub fn quote_arg(arg: &str) -> String {
    const RESERVED: &str = " \t\n\"'\\><~|&;$*?#()`";
    let is_field_code = arg.len() == 2 && arg.starts_with('%');
    let quoted = if !is_field_code && (arg.is_empty() || arg.chars().any(|c| RESERVED.contains(c)))
    {
        let mut q = String::from("\"");
        for c in arg.chars() {
            if "\"`$\\".contains(c) {
                q.push('\\');
            }
            q.push(c);
        }
        q.push('"');
        q
    } else {
        arg.to_owned()
    };
    // A literal percent sign is `%%` in Exec; then the string level: every backslash doubled.
    let quoted = if is_field_code {
        quoted
    } else {
        quoted.replace('%', "%%")
    };
    quoted.replace('\\', "\\\\")
}

/// The copy of the system's entry `text` with every `Exec` (the main one and each action's)
/// run as `launcher… --firefox BINARY -- <the original arguments after the program>`, `TryExec`
/// set to the launcher's program (an entry whose host binary is gone is then hidden rather than
/// broken, where the desktop honours TryExec), our marker added, and a comment saying what it
/// is. `None` when an `Exec` cannot be read.
#[must_use]
pub fn rewrite(
    text: &str,
    launcher: &[String],
    firefox: &str,
    system_entry: &str,
) -> Option<String> {
    let mut out = String::new();
    out.push_str(&format!(
        "# Written by `about-startup-host desktop enable`: Firefox launched through the host, which\n\
         # reads what its start needs beside it. `about-startup-host desktop disable` removes this file;\n\
         # the system's entry {} is not changed.\n",
        escape_string(system_entry)
    ));
    let mut group: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(name) = group_name(trimmed) {
            group = Some(name.to_owned());
            out.push_str(line);
            out.push('\n');
            if name == "Desktop Entry" {
                out.push_str(&format!("{MARKER_KEY}=true\n"));
                out.push_str(&format!("TryExec={}\n", escape_string(launcher.first()?)));
            }
            continue;
        }
        let key = trimmed.split_once('=').map(|(k, _)| k.trim_end());
        match key {
            Some("TryExec" | MARKER_KEY) if group.as_deref() == Some("Desktop Entry") => {}
            Some("Exec") if group.is_some() => {
                let (_, v) = trimmed.split_once('=')?;
                let args = split_exec(v.trim_start())?;
                let mut new: Vec<String> = launcher.iter().map(|a| quote_arg(a)).collect();
                new.push("--firefox".into());
                new.push(quote_arg(firefox));
                new.push("--".into());
                new.extend(args.iter().skip(1).map(|a| quote_arg(a)));
                out.push_str("Exec=");
                out.push_str(&new.join(" "));
                out.push('\n');
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Some(out)
}

/// A value of type string: backslash and control characters escaped (`\\`, `\n`, …).
#[must_use]
pub fn escape_string(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The program an `Exec` value runs (its first argument), if it can be read.
#[must_use]
pub fn program(text: &str) -> Option<String> {
    split_exec(value(text, "Desktop Entry", "Exec")?)?
        .into_iter()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relevant part of Debian 12's /usr/share/applications/firefox-esr.desktop (firefox-esr
    /// 153), translations cut down, plus an action as Mozilla's own .desktop files have.
    const DEBIAN: &str = "[Desktop Entry]\n\
Name=Firefox ESR\n\
Name[fr]=Firefox ESR\n\
Comment=Browse the World Wide Web\n\
GenericName=Web Browser\n\
X-GNOME-FullName=Firefox ESR Web Browser\n\
Exec=/usr/lib/firefox-esr/firefox-esr %u\n\
Terminal=false\n\
X-MultipleArgs=false\n\
Type=Application\n\
Icon=firefox-esr\n\
Categories=Network;WebBrowser;\n\
MimeType=text/html;text/xml;application/xhtml+xml;x-scheme-handler/http;x-scheme-handler/https;\n\
StartupWMClass=firefox-esr\n\
StartupNotify=true\n\
Actions=new-private-window;\n\
\n\
[Desktop Action new-private-window]\n\
Name=New Private Window\n\
Exec=/usr/lib/firefox-esr/firefox-esr --private-window %u\n";

    #[test]
    fn exec_values_split_as_the_specification_says() {
        assert_eq!(
            split_exec("/usr/lib/firefox-esr/firefox-esr %u").unwrap(),
            ["/usr/lib/firefox-esr/firefox-esr", "%u"]
        );
        assert_eq!(
            split_exec(r#""/opt/a b/firefox" --name "x \"y\"" %U"#).unwrap(),
            ["/opt/a b/firefox", "--name", "x \"y\"", "%U"]
        );
        // The string-level escape first: \\ in the file is one backslash for the quoting.
        assert_eq!(split_exec(r#""a\\$b""#).unwrap(), ["a$b"]);
        // \s is a space in the string, so it separates arguments like one.
        assert_eq!(split_exec(r"a\sb c").unwrap(), ["a", "b", "c"]);
        assert_eq!(split_exec("\"unterminated"), None);
    }

    #[test]
    fn quoting_round_trips_through_split() {
        for arg in [
            "/usr/bin/about-startup-host",
            "/opt/a b/x",
            "q\"uote",
            "back\\slash",
            "$HOME",
            "50%",
            "%u",
            "",
        ] {
            let written = quote_arg(arg);
            let back = split_exec(&written).unwrap();
            let expected = if arg.len() == 2 && arg.starts_with('%') {
                arg.to_owned()
            } else {
                arg.replace('%', "%%")
            };
            assert_eq!(back, [expected], "{arg:?} written as {written:?}");
        }
    }

    #[test]
    fn the_copy_keeps_every_field_and_runs_each_exec_through_the_host() {
        let launcher = [
            "/opt/about startup/about-startup-host".to_owned(),
            "launch".into(),
            "--prefetch".into(),
        ];
        let copy = rewrite(
            DEBIAN,
            &launcher,
            "/usr/lib/firefox-esr/firefox-esr",
            "/usr/share/applications/firefox-esr.desktop",
        )
        .unwrap();
        assert!(is_ours(&copy) && !is_ours(DEBIAN));
        assert_eq!(
            value(&copy, "Desktop Entry", "Exec"),
            Some(
                r#""/opt/about startup/about-startup-host" launch --prefetch --firefox /usr/lib/firefox-esr/firefox-esr -- %u"#
            )
        );
        assert_eq!(
            value(&copy, "Desktop Action new-private-window", "Exec"),
            Some(
                r#""/opt/about startup/about-startup-host" launch --prefetch --firefox /usr/lib/firefox-esr/firefox-esr -- --private-window %u"#
            )
        );
        assert_eq!(
            value(&copy, "Desktop Entry", "TryExec"),
            Some("/opt/about startup/about-startup-host")
        );
        // Every other line of the system's entry is there, unchanged and in its group.
        for line in DEBIAN.lines().filter(|l| !l.starts_with("Exec=")) {
            assert!(copy.lines().any(|c| c == line), "{line:?} missing");
        }
        for (group, key) in [
            ("Desktop Entry", "Icon"),
            ("Desktop Entry", "MimeType"),
            ("Desktop Entry", "StartupWMClass"),
            ("Desktop Action new-private-window", "Name"),
        ] {
            assert_eq!(
                value(&copy, group, key),
                value(DEBIAN, group, key),
                "{group} {key}"
            );
        }
        assert_eq!(copy.matches(MARKER_KEY).count(), 1);
        assert_eq!(
            program(DEBIAN).as_deref(),
            Some("/usr/lib/firefox-esr/firefox-esr")
        );
        // A system entry with its own TryExec: replaced, not doubled.
        let with_try = DEBIAN.replace("Terminal=false\n", "TryExec=firefox-esr\nTerminal=false\n");
        let copy = rewrite(
            &with_try,
            &launcher,
            "/usr/lib/firefox-esr/firefox-esr",
            "x",
        )
        .unwrap();
        assert_eq!(copy.matches("TryExec=").count(), 1);
    }
}
