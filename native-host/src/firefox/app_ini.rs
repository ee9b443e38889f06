//! `application.ini`: the `Version` and `BuildID` of a Firefox install, read by both the install
//! discovery and the process inspection (so neither needs the other for it).

use std::path::Path;

/// Version and BuildID from `dir/application.ini`, `None` where missing.
#[must_use]
pub fn read(dir: &Path) -> (Option<String>, Option<String>) {
    std::fs::read_to_string(dir.join("application.ini"))
        .map(|text| parse(&text))
        .unwrap_or_default()
}

/// `Version` and `BuildID` of the `[App]` section of an application.ini text.
#[must_use]
pub fn parse(text: &str) -> (Option<String>, Option<String>) {
    let (mut version, mut build_id) = (None, None);
    let mut in_app = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_app = line == "[App]";
            continue;
        }
        if !in_app || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        match key.trim() {
            "Version" => version = value,
            "BuildID" => build_id = value,
            _ => {}
        }
    }
    (version, build_id)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const INI: &str =
        "; comment\n[App]\nVendor=Mozilla\nVersion=153.7.0\nBuildID=20261103151912\n\
                       [Gecko]\nVersion=999\n";

    #[test]
    fn ini_reads_app_section_only() {
        assert_eq!(
            parse(INI),
            (Some("153.7.0".into()), Some("20261103151912".into()))
        );
        assert_eq!(parse("[Gecko]\nVersion=1\n"), (None, None));
        assert_eq!(
            parse("[App]\r\nVersion = 1.0 \r\nBuildID=\r\n"),
            (Some("1.0".into()), None)
        );
    }
}
