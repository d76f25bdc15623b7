//! `spinneret check` as a newcomer meets it: the exit status of every
//! outcome (nothing checked is never success), a local tree's root, one
//! document per page, and what each `--format` writes to standard output.
