//! The partial format's reader on arbitrary bytes: an error or a partial,
//! never a crash; a partial it accepts writes back into bytes that read
//! back as the same partial, and shows every statistic it keeps what is
//! needed for without a crash.
#![no_main]

use brc::output::{render, Format};
use brc::{Partial, Statistics};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(partial) = Partial::parse(data) else {
        return;
    };
    let bytes = partial.to_bytes();
    let again = Partial::parse(&bytes).expect("a written partial reads back");
    assert_eq!(again, partial);
    let all = Statistics::parse("count,sum,min,max,mean,stddev,stddev_pop,median,p1,p99.9");
    if let Ok(summary) = partial.finish().with_statistics(all.expect("valid names")) {
        for format in [Format::Official, Format::Csv, Format::Json] {
            render(&summary, format);
        }
    }
});
