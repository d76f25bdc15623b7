//! WebSnatcher's saved copies as another tool or a person opens them: the
//! `--archive` copies, the mirror opened offline, the WARC replayed by pywb.
