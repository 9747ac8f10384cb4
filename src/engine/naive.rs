//! The reference engine: the simplest code that is obviously right.
//!
//! One thread reading line by line from any buffered reader (a byte slice,
//! a file, a pipe), the strict parser of [`crate::parse`] on every line,
//! UTF-8 checked on every line, a `HashMap<String, Stats>`, and the line
//! number counted as it goes. It is the oracle all other engines are tested
//! against, so it stays this plain.

use std::collections::HashMap;
use std::io::BufRead;

use crate::engine::Summary;
use crate::error::{DataError, Error};
use crate::parse;
use crate::stats::Stats;

/// Aggregates `input` line by line.
pub fn aggregate(mut input: impl BufRead) -> Result<Summary, Error> {
    let mut map: HashMap<String, Stats> = HashMap::new();
    let mut line = Vec::new();
    let (mut number, mut offset) = (0, 0);
    loop {
        line.clear();
        let len = input.read_until(b'\n', &mut line)?;
        if len == 0 {
            break;
        }
        number += 1;
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let fault = |kind| DataError {
            line: number,
            offset,
            kind,
        };
        let (name, value) = parse::parse_line(text).map_err(fault)?;
        let name = parse::check_name(name).map_err(fault)?;
        match map.get_mut(name) {
            Some(stats) => stats.add(value),
            None => {
                map.insert(name.to_string(), Stats::new(value));
            }
        }
        offset += len as u64;
    }
    let mut stations: Vec<(String, Stats)> = map.into_iter().collect();
    stations.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Summary { stations })
}
