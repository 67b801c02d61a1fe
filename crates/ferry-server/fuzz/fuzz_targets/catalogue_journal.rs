//! Fuzz target: arbitrary bytes as a definitions journal (objects.journal), and the same
//! bytes after a valid header. Whatever they are, the decoder returns the complete
//! records or a typed error: it never panics and never allocates what a length field
//! claims. The property tests in ferry-server's catalogue_store::journal cover the same
//! decoder in `cargo test`.
#![no_main]

use ferry_server::catalogue_store::journal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(scan) = journal::scan(data) {
        let end = (scan.valid_len + scan.torn_bytes) as usize;
        assert!(data[end..].iter().all(|&b| b == 0), "only zeros after a torn tail");
    }
    let mut with_header = journal::encode_file_header(7).to_vec();
    with_header.extend_from_slice(data);
    let scan = journal::scan(&with_header);
    if let Ok(scan) = scan {
        assert_eq!(scan.generation, 7);
        assert!(scan.valid_len as usize <= with_header.len());
    }
});
