//! WebSnatcher's profiles and command line as a user meets them: editing a
//! profile, quiet output, names a run cannot write, watching with
//! `--resolve`, engines checked when added, exclusions that are no failure.
