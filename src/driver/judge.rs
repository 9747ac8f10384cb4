//! What feeding a chunk or a block reports: its first fault, as `naive`
//! would report it. An engine judges a faulty line by its head; the line is
//! judged whole here ([`judge_whole`]), and the UTF-8 of the lines fed is
//! checked unless the engine checks names itself ([`check`]).

use std::ops::Range;

use crate::engine::Accumulator;
use crate::error::{ErrorKind, Fault};
use crate::parse::{self, LineHead};

/// Feeds a chunk or block of whole lines, starting at rank `offset`, and
/// checks the UTF-8 of its lines before the first parse fault (unless the
/// engine does): the first fault in it, as `naive` would report it. A
/// faulty line is judged whole ([`judge_whole`]), calling `release` with
/// the ranks of each window read.
pub(super) fn check<A: Accumulator>(
    acc: &mut A,
    block: &[u8],
    offset: usize,
    release: &dyn Fn(Range<usize>),
) -> Result<(), Fault> {
    // The block holds the whole line, however long.
    let parsed = acc
        .feed(block, offset)
        .map_err(|fault| judge_whole(fault, block, offset, release));
    match A::CHECKS_UTF8 {
        true => parsed,
        false => parse::with_utf8_checked(block, offset, parsed),
    }
}

/// Finishes the verdict on a fault's line where [`Accumulator::feed`]
/// judged it by its head: a line whose head holds no `;` is malformed either way, but
/// a `;` further on makes it a name too long rather than a line without
/// `;`. `input` is the input from byte `base` on; it is read from the
/// fault's line on, a window at a time and only until the verdict is known,
/// calling `release` with each window once read.
pub(super) fn judge_whole(
    fault: Fault,
    input: &[u8],
    base: usize,
    release: &dyn Fn(Range<usize>),
) -> Fault {
    if !matches!(fault.kind, ErrorKind::MissingSemicolon { .. }) {
        return fault;
    }
    const WINDOW: usize = 4 << 20;
    let mut line = LineHead::default();
    let mut pos = fault.offset - base;
    loop {
        let end = input.len().min(pos + WINDOW);
        let ended = line.extend(&input[pos..end]).is_some();
        release(base + pos..base + end);
        if ended || line.decided() || end == input.len() {
            break;
        }
        pos = end;
    }
    match line.parse() {
        Err(kind) => Fault { kind, ..fault },
        Ok(_) => unreachable!("an engine found a valid line malformed: {fault:?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::aggregate;
    use crate::engine::{Engine, Options};
    use crate::error::quoted;

    #[test]
    fn a_long_faulty_line_is_judged_whole_a_window_at_a_time() {
        let len = 9 << 20;
        let input = [&b"a;1.0\n"[..], &vec![b'x'; len], b";1.0\nb;2.0\n"].concat();
        // What an engine says, from the line's head.
        let fault = || Fault {
            offset: 6,
            kind: ErrorKind::MissingSemicolon {
                line: quoted(&input[6..]),
            },
        };
        let whole = Fault {
            offset: 6,
            kind: ErrorKind::NameTooLong { len },
        };
        let released = RefCell::new(Vec::new());
        let judged = judge_whole(fault(), &input, 0, &|r| released.borrow_mut().push(r));
        assert_eq!(judged, whole);
        let w = 4 << 20;
        let windows = [6..6 + w, 6 + w..6 + 2 * w, 6 + 2 * w..input.len()];
        assert_eq!(released.into_inner(), windows);
        // From a block further on in the input, as on the stream path.
        assert_eq!(judge_whole(fault(), &input[6..], 6, &|_| {}), whole);
        // Every other fault was judged whole already.
        let other = Fault {
            offset: 0,
            kind: ErrorKind::EmptyName,
        };
        let judged = judge_whole(other.clone(), &input, 0, &|_| panic!("read"));
        assert_eq!(judged, other);
        // And every engine says so.
        let options = Options {
            threads: 2,
            chunk_size: 1 << 20,
        };
        for engine in Engine::ALL {
            let got = aggregate(&input, engine, &options).unwrap_err();
            assert_eq!(got, whole.clone().after_newlines(1), "{engine:?}");
        }
    }
}
