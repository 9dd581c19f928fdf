//! The numbers that several modules and the error messages share, on the ground floor so that
//! each of those modules can name them without naming another (which would close a circle:
//! `error` quotes them, and `layout` and `generator` use them).

/// The most fields a layout may have.
pub const MAX_FIELDS: usize = 16;

/// How far ahead of the clock, beyond `max_drift_ms`, a caller's time may be in
/// `Generator::next_id_at` when the generator's state outlives the call (it is shared in the
/// process, on the host, kept in a state file or held under a lease): a little, for a caller
/// whose clock runs slightly ahead of this one. A time further ahead is refused
/// (`Error::AheadOfClock`): the state would stay there, and every other caller of the
/// identity would wait for the clock to catch up (one call for the year 2080 would lock it out
/// for decades). An isolated generator takes any time: its state is its caller's alone.
pub const AHEAD_SLACK_MS: u64 = 1000;

/// How far ahead of the clock a caller's time may be where the state is the host's record
/// (every way of issuing but an isolated generator and Rust's own-clock ones): the record is
/// checked at least this often, in clock readings, and a record made anew starts this far (plus
/// the users' `max_drift_ms`) past what its removed copy's processes may issue, so a time
/// further ahead is refused (`Error::AheadOfClock`).
pub const RECORD_AHEAD_MS: u64 = 50;
