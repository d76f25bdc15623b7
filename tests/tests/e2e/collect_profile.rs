//! WebSnatcher's profiles and command line as a user meets them: editing a
//! profile, quiet output, names a run cannot write, watching with
//! `--resolve`, engines checked when added, exclusions that are no failure.

use crate::common::{expect_exit, spinneret};

/// `spinneret profile ARGS…`, expected to exit with `code`; its stderr.
fn profile(args: &[&str], code: i32) -> String {
    let mut all = vec!["profile"];
    all.extend_from_slice(args);
    expect_exit(&spinneret(&all), code)
}

/// `profile remove` takes the entry and the comment right above it, and
/// nothing else: not the new profile's commented settings (which sat above
/// its first `[[url]]`), not a comment closing the entry before, not a
/// heading over several entries.
#[test]
fn profile_remove_takes_the_entry_and_its_own_comment_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("news.toml");
    let f = file.to_str().unwrap();
    profile(&["new", f, "--url", "https://news.example/"], 0);
    let template = std::fs::read_to_string(&file).unwrap();
    assert!(
        template.contains("mirror = \"mirror\"\n# keep_runs = 1 ")
            && template.contains("# exclude = []             # URLs not of interest, never fetched\n\n[[url]]\nurl = \"https://news.example/\"\n"),
        "{template}"
    );
    profile(&["add", f, "url", "https://blog.example/"], 0);
    profile(&["remove", f, "url", "https://news.example/"], 0);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        template.replace("https://news.example/", "https://blog.example/")
    );

    let written = "mirror = \"m\"\n\n\
                   # ---- Pages ----\n\n\
                   # The news.\n[[url]]\nurl = \"https://news.example/\"\n# (read daily)\n\n\
                   # The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\ndepth = 1\n\n\
                   # Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n\n\
                   # The end.\n";
    for (removed, left) in [
        (
            &["url", "https://blog.example/"][..],
            "mirror = \"m\"\n\n\
             # ---- Pages ----\n\n\
             # The news.\n[[url]]\nurl = \"https://news.example/\"\n# (read daily)\n\n\
             # Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n\n\
             # The end.\n",
        ),
        (
            &["url", "https://news.example/"],
            "mirror = \"m\"\n\n\
             # ---- Pages ----\n\n\
             # (read daily)\n\n\
             # The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\ndepth = 1\n\n\
             # Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n\n\
             # The end.\n",
        ),
        (
            &["engine", "wiki"],
            "mirror = \"m\"\n\n\
             # ---- Pages ----\n\n\
             # The news.\n[[url]]\nurl = \"https://news.example/\"\n# (read daily)\n\n\
             # The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\ndepth = 1\n\n\
             # The end.\n",
        ),
    ] {
        std::fs::write(&file, written).unwrap();
        let mut args = vec!["remove", f];
        args.extend_from_slice(removed);
        profile(&args, 0);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), left, "{removed:?}");
    }
}
