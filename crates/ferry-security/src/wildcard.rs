//! Wildcard matching shared by CHLAUTH profiles and authority profiles: `*` matches any
//! run of bytes (none included), an optional single-character wildcard matches one, and
//! everything else matches itself. Iterative, with one backtrack point, so a hostile
//! pattern costs O(pattern × name) at worst.

/// True when `name` is one of the names `pattern` stands for; `any_one` is the byte that
/// stands for exactly one byte (`?` in authority profiles), if the pattern has one.
pub(crate) fn matches(pattern: &[u8], name: &[u8], any_one: Option<u8>) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if p < pattern.len() && (Some(pattern[p]) == any_one || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|b| *b == b'*')
}
