//! PutDate/PutTime (`YYYYMMDD`, `HHMMSSTH`, UTC) as milliseconds since the epoch: the
//! JMSTimestamp and AMQP creation-time of a native message, as MQ JMS derives them.

use ferry_mqi::MessageDescriptor;

/// When the message was put, in ms since the epoch; `None` when PutDate/PutTime are
/// blank or not valid digits.
pub(crate) fn put_ms(md: &MessageDescriptor) -> Option<i64> {
    let d = md.put_date.as_bytes();
    let t = md.put_time.as_bytes();
    let num = |b: &[u8]| -> Option<i64> {
        b.iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (year, month, day) = (num(&d[0..4])?, num(&d[4..6])?, num(&d[6..8])?);
    let (h, m, s, hs) = (
        num(&t[0..2])?,
        num(&t[2..4])?,
        num(&t[4..6])?,
        num(&t[6..8])?,
    );
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + h) * 60 + m) * 60_000 + s * 1000 + hs * 10)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::FixedStr;

    fn md(date: &str, time: &str) -> MessageDescriptor {
        MessageDescriptor {
            put_date: FixedStr::truncating(date),
            put_time: FixedStr::truncating(time),
            ..Default::default()
        }
    }

    #[test]
    fn reads_the_put_stamp_in_utc() {
        assert_eq!(put_ms(&md("19700101", "00000000")), Some(0));
        // 2024-02-29T13:45:07.89Z (PutTime keeps hundredths).
        assert_eq!(put_ms(&md("20240229", "13450789")), Some(1_709_214_307_890));
    }

    #[test]
    fn blank_or_garbage_is_none() {
        assert_eq!(put_ms(&MessageDescriptor::default()), None);
        assert_eq!(put_ms(&md("2024AB01", "00000000")), None);
        assert_eq!(put_ms(&md("20241301", "00000000")), None);
    }
}
