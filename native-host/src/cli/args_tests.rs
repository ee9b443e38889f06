use super::*;
use clap::CommandFactory;

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

/// Issue 29: `--seconds inf` (or NaN) turned off every bound of root's recording.
#[test]
fn seconds_are_finite_and_positive() {
    assert_eq!(parse_seconds("2.5"), Ok(2.5));
    for bad in ["inf", "-inf", "NaN", "nan", "-1", "0", "1e300", "x", ""] {
        assert!(parse_seconds(bad).is_err(), "{bad}");
    }
    for argv in [
        &[
            "about-startup-host",
            "launch",
            "--trace",
            "--seconds",
            "inf",
        ][..],
        &["about-startup-host", "trace", "--pid", "1", "--seconds=NaN"],
        &[
            "about-startup-host",
            "trace",
            "--pid",
            "1",
            "--seconds",
            "-1",
        ],
    ] {
        let e = Cli::try_parse_from(argv).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{argv:?}");
        assert!(e.to_string().contains("--seconds"), "{e}");
    }
}

/// Issue 29 #5: the other numbers in ms (`trace summary --axis-end`, `launch --until-ms`)
/// refuse `inf`, `NaN` and negative values as `--seconds` does.
#[test]
fn times_in_ms_are_finite_and_within_a_day() {
    for (option, argv) in [
        ("--axis-end", &["trace", "summary", "--axis-end"][..]),
        ("--until-ms", &["launch", "--prefetch", "--until-ms"][..]),
    ] {
        for bad in ["inf", "NaN", "-1", "1e300"] {
            let mut all = vec!["about-startup-host"];
            all.extend_from_slice(argv);
            all.push(bad);
            let e = Cli::try_parse_from(&all).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{all:?}");
            assert!(
                e.to_string().contains(option) && e.to_string().contains("a time in ms"),
                "{e}"
            );
        }
        let mut good = vec!["about-startup-host"];
        good.extend_from_slice(argv);
        good.push("1351.5");
        assert!(Cli::try_parse_from(&good).is_ok(), "{good:?}");
    }
}
