//! The reference engine: the simplest code that is obviously right.
//!
//! One thread, the strict parser of [`crate::parse`] on every line, UTF-8
//! checked on every line, a `HashMap<String, Stats>`. It is the oracle all
//! other engines are tested against, so it stays this plain.

use std::collections::HashMap;

use crate::engine::Summary;
use crate::error::Fault;
use crate::parse;
use crate::stats::Stats;

/// Aggregates `input` line by line.
pub fn aggregate(input: &[u8]) -> Result<Summary, Fault> {
    let mut map: HashMap<String, Stats> = HashMap::new();
    for (offset, line) in parse::lines(input) {
        let fault = |kind| Fault { offset, kind };
        let (name, value) = parse::parse_line(line).map_err(fault)?;
        let name = parse::check_name(name).map_err(fault)?;
        match map.get_mut(name) {
            Some(stats) => stats.add(value),
            None => {
                map.insert(name.to_string(), Stats::new(value));
            }
        }
    }
    let mut stations: Vec<(String, Stats)> = map.into_iter().collect();
    stations.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Summary { stations })
}
