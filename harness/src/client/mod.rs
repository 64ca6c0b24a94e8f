//! The scripted Daedalus client on the raw wire.
