//! What the property tests of partials and shards share: random rows on a
//! few awkward names, their measurements text, and random merge trees.

use brc::Partial;
use proptest::prelude::*;
use proptest::sample::Index;

/// A station name: a few characters among those the format quotes or
/// could mangle (`,`, `"`, `\r`, spaces), multi-byte ones, and letters.
pub fn name() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'b', 'Z', ',', '"', ' ', '\r', '\t', '=', 'é', '中', '😀',
    ]);
    prop::collection::vec(chars, 1..=8).prop_map(|chars| chars.into_iter().collect())
}

/// Rows on a few names, so that pieces share stations.
pub fn rows() -> impl Strategy<Value = Vec<(String, i16)>> {
    prop::collection::vec(name(), 1..=6).prop_flat_map(|names| {
        let value = prop_oneof![-999i16..=999, prop::sample::select(vec![-999i16, 0, 999])];
        prop::collection::vec((prop::sample::select(names), value), 0..=120)
    })
}

/// The measurements file of `rows`, with or without a final newline.
pub fn text<'a>(rows: impl IntoIterator<Item = &'a (String, i16)>, final_newline: bool) -> Vec<u8> {
    let lines: Vec<String> = (rows.into_iter())
        .map(|(name, t)| {
            let sign = if *t < 0 { "-" } else { "" };
            let a = t.unsigned_abs();
            format!("{name};{sign}{}.{}", a / 10, a % 10)
        })
        .collect();
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text.into_bytes()
}

/// Merges `partials` as a random binary tree: `picks` choose which two
/// merge next, so the grouping and the order are both random.
pub fn merge_tree(mut partials: Vec<Partial>, picks: &[(Index, Index)]) -> Partial {
    let mut picks = picks.iter().cycle();
    while partials.len() > 1 {
        let (i, j) = picks.next().unwrap();
        let a = partials.swap_remove(i.index(partials.len()));
        let b = partials.swap_remove(j.index(partials.len()));
        partials.push(a.merge(b).unwrap());
    }
    partials.pop().unwrap_or_default()
}
