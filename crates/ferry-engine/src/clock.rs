//! Time as the engine sees it: an injected [`Timestamp`] (the engine never reads a clock)
//! and the UTC formatting MQ uses for PutDate/PutTime and CRDATE/CRTIME.

use ferry_mqi::FixedStr;

/// Milliseconds since the Unix epoch, UTC, as given by the caller.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// The raw milliseconds.
    pub fn ms(self) -> u64 {
        self.0
    }

    /// This time plus `ms` milliseconds (saturating).
    pub fn plus_ms(self, ms: u64) -> Timestamp {
        Timestamp(self.0.saturating_add(ms))
    }
}

/// A UTC civil date and time broken into fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub hundredths: u32,
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl Civil {
    /// The UTC civil time of `t`.
    pub fn from_timestamp(t: Timestamp) -> Civil {
        let ms = t.0;
        let secs = (ms / 1000) as i64;
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: sod / 3600,
            minute: (sod / 60) % 60,
            second: sod % 60,
            hundredths: ((ms % 1000) / 10) as u32,
        }
    }
}

/// MQMD PutDate (`YYYYMMDD`) and PutTime (`HHMMSSTH`) for `t`, UTC.
///
/// Runs on every put, so it writes the digits straight into the fields (no allocation).
pub fn put_date_time(t: Timestamp) -> (FixedStr<8>, FixedStr<8>) {
    let c = Civil::from_timestamp(t);
    let mut date = [b'0'; 8];
    digits(&mut date[0..4], c.year.clamp(0, 9999) as u32);
    digits(&mut date[4..6], c.month);
    digits(&mut date[6..8], c.day);
    let mut time = [b'0'; 8];
    digits(&mut time[0..2], c.hour);
    digits(&mut time[2..4], c.minute);
    digits(&mut time[4..6], c.second);
    digits(&mut time[6..8], c.hundredths);
    (FixedStr::from_bytes(date), FixedStr::from_bytes(time))
}

/// PutDate and PutTime of the last put, by the hundredth of a second they are for: a
/// busy queue manager makes many puts per hundredth (every put of a read batch shares
/// one clock reading), and working out the calendar date for each was ~1.4% of its
/// instructions per message.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PutStamp {
    last: Option<(u64, FixedStr<8>, FixedStr<8>)>,
}

impl PutStamp {
    /// [`put_date_time`] of `t`, made again only when `t` is in another hundredth.
    pub fn of(&mut self, t: Timestamp) -> (FixedStr<8>, FixedStr<8>) {
        let hundredth = t.0 / 10;
        match self.last {
            Some((h, d, tm)) if h == hundredth => (d, tm),
            _ => {
                let (d, tm) = put_date_time(t);
                self.last = Some((hundredth, d, tm));
                (d, tm)
            }
        }
    }
}

/// Writes `n` as zero-padded decimal digits filling `out` (higher digits dropped).
fn digits(out: &mut [u8], mut n: u32) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// CRDATE/ALTDATE (`yyyy-mm-dd`) and CRTIME/ALTTIME (`hh.mm.ss`) for `t`, UTC.
pub fn admin_date_time(t: Timestamp) -> (String, String) {
    let c = Civil::from_timestamp(t);
    (
        format!("{:04}-{:02}-{:02}", c.year, c.month, c.day),
        format!("{:02}.{:02}.{:02}", c.hour, c.minute, c.second),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_put_stamp_is_made_again_in_each_new_hundredth() {
        let mut stamp = PutStamp::default();
        for ms in [
            0,
            9,
            10,
            19,
            999,
            1_000,
            1_709_214_307_891,
            1_709_214_307_899,
        ] {
            assert_eq!(
                stamp.of(Timestamp(ms)),
                put_date_time(Timestamp(ms)),
                "at {ms} ms"
            );
        }
        // Back in time (a clock step) also makes it again.
        assert_eq!(stamp.of(Timestamp(5)), put_date_time(Timestamp(5)));
    }

    #[test]
    fn epoch_is_1970() {
        let (d, t) = put_date_time(Timestamp(0));
        assert_eq!(d.as_str(), "19700101");
        assert_eq!(t.as_str(), "00000000");
    }

    #[test]
    fn known_instant() {
        // 2024-02-29T13:45:07.891Z
        let (d, t) = put_date_time(Timestamp(1_709_214_307_891));
        assert_eq!(d.as_str(), "20240229");
        assert_eq!(t.as_str(), "13450789");
        let (ad, at) = admin_date_time(Timestamp(1_709_214_307_891));
        assert_eq!(ad, "2024-02-29");
        assert_eq!(at, "13.45.07");
    }

    #[test]
    fn year_end() {
        // 1999-12-31T23:59:59.990Z
        let (d, t) = put_date_time(Timestamp(946_684_799_990));
        assert_eq!(d.as_str(), "19991231");
        assert_eq!(t.as_str(), "23595999");
    }
}
