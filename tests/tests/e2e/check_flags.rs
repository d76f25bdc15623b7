//! The flags and inputs a lychee or LinkChecker user types into
//! `spinneret check`, and the configuration mistakes a person makes, each
//! with the message they can act on.
