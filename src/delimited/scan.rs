//! The row scanner: a delimited file's rows and cells, RFC 4180 quoting
//! checked, found 64 bytes at a time.
//!
//! For each block of 64 bytes, one mask marks its delimiters and line
//! feeds and one its quotes. The bytes inside quotes are those after an odd
//! number of quotes since a row start outside quotes: the quote mask's
//! prefix XOR, carried from block to block, so delimiters and line feeds
//! inside quoted cells are dropped from the first mask. What remains, with
//! every quote, are the *events* a row is parsed from: a few per row,
//! where a byte-by-byte parser looks at every byte. The masks come from
//! [`super::masks`].

use super::masks::Masks;

/// The events of `bytes` from a position outside quotes: delimiters and
/// line feeds outside quotes, and every quote, in order.
pub(super) struct Events<'a> {
    bytes: &'a [u8],
    delimiter: u8,
    masks: Masks,
    /// The start of the block `bits` belongs to.
    base: usize,
    /// Its events not taken yet.
    bits: u64,
    /// Its line feeds and quotes, to tell an event's kind.
    lines: u64,
    quotes: u64,
    /// Whether its last byte lies inside quotes.
    inside: bool,
}

impl<'a> Events<'a> {
    /// The events of `bytes` from `at`, which lies outside quotes.
    pub(super) fn new(bytes: &'a [u8], at: usize, delimiter: u8, masks: Masks) -> Events<'a> {
        let mut events = Events {
            bytes,
            delimiter,
            masks,
            base: at,
            bits: 0,
            lines: 0,
            quotes: 0,
            inside: false,
        };
        events.load();
        events
    }

    /// Loads the block at `base`.
    #[inline]
    fn load(&mut self) {
        let rest = &self.bytes[self.base.min(self.bytes.len())..];
        let (ends, lines, quotes) = match rest.first_chunk::<64>() {
            Some(block) => self.masks.of(block, self.delimiter),
            None => {
                // The last bytes, padded with bytes that are no event.
                let mut block = [0u8; 64];
                block[..rest.len()].copy_from_slice(rest);
                self.masks.of(&block, self.delimiter)
            }
        };
        let mut inside = self.masks.inside(quotes);
        if self.inside {
            inside = !inside;
        }
        self.inside = inside >> 63 == 1;
        self.bits = (ends & !inside) | quotes;
        (self.lines, self.quotes) = (lines, quotes);
    }

    /// The next event, or `None` at the end of the bytes.
    #[inline]
    pub(super) fn next(&mut self) -> Option<Event> {
        while self.bits == 0 {
            self.base += 64;
            if self.base >= self.bytes.len() {
                return None;
            }
            self.load();
        }
        let bit = self.bits & self.bits.wrapping_neg();
        let at = self.base + bit.trailing_zeros() as usize;
        self.bits ^= bit;
        let kind = match (self.quotes & bit != 0, self.lines & bit != 0) {
            (true, _) => Kind::Quote,
            (_, true) => Kind::Line,
            _ => Kind::Delimiter,
        };
        Some(Event { at, kind })
    }
}

/// An event: where, and which byte is there.
#[derive(Clone, Copy, Debug)]
pub(super) struct Event {
    at: usize,
    kind: Kind,
}

/// An event's byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Delimiter,
    Line,
    Quote,
}

/// A cell of a row: its bytes' range, quotes removed, and whether it
/// holds doubled quotes to undo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Cell {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) escaped: bool,
    /// Whether the cell was quoted.
    pub(super) quoted: bool,
}

impl Cell {
    /// The cell's text, doubled quotes undone into `scratch` if need be.
    pub(super) fn text<'b>(&self, bytes: &'b [u8], scratch: &'b mut Vec<u8>) -> &'b [u8] {
        let raw = &bytes[self.start..self.end];
        if !self.escaped {
            return raw;
        }
        scratch.clear();
        unescape(raw, scratch);
        scratch
    }
}

/// Appends `raw` to `out` with each doubled quote made one.
pub(super) fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    let mut parts = raw.split(|&b| b == b'"');
    if let Some(first) = parts.next() {
        out.extend_from_slice(first);
    }
    // Between two quotes of a pair lies an empty part.
    let mut pending = false;
    for part in parts {
        if pending {
            out.push(b'"');
            out.extend_from_slice(part);
            pending = false;
        } else {
            pending = true;
            out.extend_from_slice(part);
        }
    }
}

/// What is wrong with a row's quoting or shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// A quote inside a cell that does not start with one.
    StrayQuote,
    /// Something other than a delimiter or the line's end after a closing
    /// quote.
    AfterQuote,
    /// A quoted cell still open at the end of the input.
    Unclosed,
}

/// A row's shape fault: the row's start, the cell (counted from 0) and
/// what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ShapeFault {
    pub(super) row: usize,
    pub(super) cell: usize,
    pub(super) shape: Shape,
}

/// Reads rows from a row start outside quotes, a row at a time.
pub(super) struct Rows<'a> {
    events: Events<'a>,
    bytes: &'a [u8],
    /// Where the next row starts.
    at: usize,
}

impl<'a> Rows<'a> {
    pub(super) fn new(bytes: &'a [u8], at: usize, delimiter: u8, masks: Masks) -> Rows<'a> {
        Rows {
            events: Events::new(bytes, at, delimiter, masks),
            bytes,
            at,
        }
    }

    /// Where the next row starts (the input's length after the last).
    pub(super) fn at(&self) -> usize {
        self.at
    }

    /// Reads the next row, handing each cell to `cell` with its number
    /// (from 0); returns the number of cells, or `None` at the end of the
    /// input. A line holding nothing, `\r` aside, is a row of one empty
    /// cell.
    #[inline]
    pub(super) fn next(
        &mut self,
        mut cell: impl FnMut(usize, Cell),
    ) -> Option<Result<usize, ShapeFault>> {
        let row = self.at;
        if row >= self.bytes.len() {
            return None;
        }
        let bytes = self.bytes;
        let fault = |cell, shape| Some(Err(ShapeFault { row, cell, shape }));
        let mut n = 0;
        let mut start = row;
        loop {
            let Some(mut e) = self.events.next() else {
                // The last line, without its line feed.
                let end = trim_cr(bytes, start, bytes.len());
                cell(
                    n,
                    Cell {
                        start,
                        end,
                        escaped: false,
                        quoted: false,
                    },
                );
                self.at = bytes.len();
                return Some(Ok(n + 1));
            };
            let mut c = Cell {
                start,
                end: e.at,
                escaped: false,
                quoted: false,
            };
            match e.kind {
                Kind::Quote if e.at != start => return fault(n, Shape::StrayQuote),
                Kind::Quote => {
                    // A quoted cell: quote pairs until one is not doubled.
                    c.quoted = true;
                    c.start = e.at + 1;
                    let close = loop {
                        // Inside quotes only quotes are events.
                        let Some(q) = self.events.next() else {
                            return fault(n, Shape::Unclosed);
                        };
                        match self.events.next() {
                            Some(next) if next.at == q.at + 1 && next.kind == Kind::Quote => {
                                c.escaped = true
                            }
                            next => {
                                c.end = q.at;
                                break next;
                            }
                        }
                    };
                    let Some(next) = close else {
                        // The closing quote ends the input.
                        if trim_cr(bytes, c.end + 1, bytes.len()) != c.end + 1 {
                            return fault(n, Shape::AfterQuote);
                        }
                        cell(n, c);
                        self.at = bytes.len();
                        return Some(Ok(n + 1));
                    };
                    let after = match next.at - c.end {
                        1 => true,
                        2 => next.kind == Kind::Line && bytes[c.end + 1] == b'\r',
                        _ => false,
                    };
                    if !after || next.kind == Kind::Quote {
                        return fault(n, Shape::AfterQuote);
                    }
                    e = next;
                }
                Kind::Line => c.end = trim_cr(bytes, start, e.at),
                Kind::Delimiter => {}
            }
            cell(n, c);
            n += 1;
            if e.kind == Kind::Line {
                self.at = e.at + 1;
                return Some(Ok(n));
            }
            start = e.at + 1;
        }
    }
}

/// A row that the 64 bytes at its start hold, read from their masks:
/// it has the layout's number of cells, and every quote in it opens or
/// closes a whole cell (no doubled quotes). Then the masks give the
/// cells' bounds at once, where [`Rows`] takes its events one by one and
/// tells each one's kind.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    /// The row's start.
    at: usize,
    /// The delimiters that end its cells, from `at`.
    delimiters: u64,
    /// Its quotes, from `at`.
    quotes: u64,
    /// Where its last cell ends (before a `\r`), from `at`.
    end: usize,
    /// Where its line feed is, from `at`.
    feed: usize,
}

impl Window {
    /// The row at `at` (a row start outside quotes), if the 64 bytes
    /// there hold it, read the way [`Rows::next`] reads it, with
    /// `columns` cells and no doubled quotes; `None` leaves it to
    /// [`Rows`], which also reports every fault.
    #[inline(always)]
    pub(super) fn at(
        bytes: &[u8],
        at: usize,
        delimiter: u8,
        masks: Masks,
        columns: usize,
    ) -> Option<Window> {
        let block = bytes.get(at..)?.first_chunk::<64>()?;
        let (ends, lines, quotes) = masks.of(block, delimiter);
        let inside = masks.inside(quotes);
        let line = lines & !inside;
        if line == 0 {
            return None;
        }
        let feed = line.trailing_zeros() as usize;
        let before = (1u64 << feed) - 1;
        // Line feeds outside quotes come at `feed` first, so below it these
        // are the delimiters that end cells.
        let delimiters = ends & !inside & before;
        if masks.count(delimiters) as usize + 1 != columns {
            return None;
        }
        let end = match feed {
            0 => 0,
            _ => feed - usize::from(block[feed - 1] == b'\r'),
        };
        let quotes = quotes & before;
        // An opening quote is a quote inside quotes from its own bit on (the
        // prefix XOR counts it); it must start a cell, and its closing quote
        // must end one. Doubled quotes and stray ones fail this.
        let starts = delimiters << 1 | 1;
        let stops = delimiters | 1 << end;
        if quotes & inside & !starts != 0 || (quotes & !inside) << 1 & !stops != 0 {
            return None;
        }
        Some(Window {
            at,
            delimiters,
            quotes,
            end,
            feed,
        })
    }

    /// Where the next row starts.
    #[inline(always)]
    pub(super) fn next(&self) -> usize {
        self.at + self.feed + 1
    }

    /// The cell that starts at `start` and stops at `stop`, from `at`.
    #[inline(always)]
    fn cell(&self, start: usize, stop: usize) -> Cell {
        let quoted = self.quotes >> start & 1 == 1;
        Cell {
            start: self.at + start + usize::from(quoted),
            end: self.at + stop - usize::from(quoted),
            escaped: false,
            quoted,
        }
    }

    /// Cell `n` (below the row's columns), its delimiters found by
    /// [`Masks::skip`]: for a row's few wanted cells.
    #[inline(always)]
    pub(super) fn nth(&self, n: usize, masks: Masks) -> Cell {
        // The delimiter before the cell, if any, and those after it.
        let (start, after) = match n {
            0 => (0, self.delimiters),
            _ => {
                let rest = masks.skip(self.delimiters, n as u32 - 1);
                (
                    rest.trailing_zeros() as usize + 1,
                    rest & rest.wrapping_sub(1),
                )
            }
        };
        let stop = match after {
            0 => self.end,
            _ => after.trailing_zeros() as usize,
        };
        self.cell(start, stop)
    }

    /// Hands the cells whose bits are set in `wanted` (below the row's
    /// columns) to `cell` with their numbers, in order, passing the
    /// delimiters once.
    #[inline(always)]
    pub(super) fn cells(&self, wanted: u64, mut cell: impl FnMut(usize, Cell)) {
        // `rest` holds the delimiters after cell `n`'s start.
        let (mut n, mut start, mut rest) = (0, 0, self.delimiters);
        let mut wanted = wanted;
        while wanted != 0 {
            let column = wanted.trailing_zeros() as usize;
            wanted &= wanted - 1;
            if n < column {
                // Only the last delimiter passed tells where the cell starts.
                for _ in n + 1..column {
                    rest &= rest - 1;
                }
                start = rest.trailing_zeros() as usize + 1;
                rest &= rest - 1;
                n = column;
            }
            let stop = match rest {
                0 => self.end,
                _ => rest.trailing_zeros() as usize,
            };
            cell(column, self.cell(start, stop));
        }
    }
}

/// `end`, or one less if a `\r` ends `bytes[start..end]`.
#[inline]
fn trim_cr(bytes: &[u8], start: usize, end: usize) -> usize {
    if end > start && bytes[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// A guess at the first row start at or after `at`: just past the first
/// line feed at or after `at - 1`, which is right unless that line feed
/// lies inside quotes; the caller confirms it.
pub(super) fn guess_row_start(bytes: &[u8], at: usize) -> usize {
    if at == 0 {
        return 0;
    }
    match memchr::memchr(b'\n', &bytes[at - 1..]) {
        Some(i) => at + i,
        None => bytes.len(),
    }
}

/// The first row start at or after `at`, found by counting the quotes
/// from `from`, a row start before it: exact, for a pass over the bytes
/// between.
pub(super) fn row_start_after(bytes: &[u8], from: usize, at: usize) -> usize {
    if at <= from {
        return from;
    }
    let quotes = memchr::memchr_iter(b'"', &bytes[from..at - 1]).count();
    let mut inside = quotes % 2 == 1;
    for (i, &b) in bytes[at - 1..].iter().enumerate() {
        match b {
            b'"' => inside = !inside,
            b'\n' if !inside => return at + i,
            _ => {}
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Masks> {
        Masks::all()
    }

    /// The rows of `text` as lists of cell texts, or the first fault.
    fn rows(text: &str, masks: Masks) -> Result<Vec<Vec<String>>, ShapeFault> {
        let bytes = text.as_bytes();
        let mut rows = Rows::new(bytes, 0, b',', masks);
        let mut out = Vec::new();
        loop {
            let mut cells = Vec::new();
            let got = rows.next(|_, c| {
                let mut scratch = Vec::new();
                cells.push(String::from_utf8(c.text(bytes, &mut scratch).to_vec()).unwrap());
            });
            match got {
                None => return Ok(out),
                Some(Ok(n)) => {
                    assert_eq!(n, cells.len());
                    out.push(cells);
                }
                Some(Err(f)) => return Err(f),
            }
        }
    }

    #[test]
    fn rfc_4180_quoting_in_every_block_position() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("a,b\n1,2\n", &[&["a", "b"], &["1", "2"]]),
            ("a,b\r\n1,2\r\n", &[&["a", "b"], &["1", "2"]]),
            ("a,b\n1,2", &[&["a", "b"], &["1", "2"]]),
            ("\"x,y\",\"say \"\"hi\"\"\"\n", &[&["x,y", "say \"hi\""]]),
            (
                "\"line\nbreak\",2\n3,4\n",
                &[&["line\nbreak", "2"], &["3", "4"]],
            ),
            ("\"\",\"\"\"\"\n", &[&["", "\""]]),
            ("a,,\n", &[&["a", "", ""]]),
            ("\n", &[&[""]]),
            ("\"q\"\r\n", &[&["q"]]),
            ("\"q\"", &[&["q"]]),
        ];
        for masks in all() {
            for pad in [0, 1, 30, 61, 62, 63, 64, 127] {
                for (text, want) in cases {
                    let text = format!("{}\n{text}", "p".repeat(pad));
                    let got = rows(&text, masks).unwrap();
                    assert_eq!(got[0], ["p".repeat(pad)], "{masks:?} {pad} {text:?}");
                    let want: Vec<Vec<String>> = want
                        .iter()
                        .map(|r| r.iter().map(|c| c.to_string()).collect())
                        .collect();
                    assert_eq!(got[1..], want[..], "{masks:?} {pad} {text:?}");
                }
            }
        }
    }

    #[test]
    fn bad_quoting_is_a_fault_at_its_row_and_cell() {
        for masks in all() {
            for (text, row, cell, shape) in [
                ("a,b\"c\n", 0, 1, Shape::StrayQuote),
                ("x\n\"a\"b,c\n", 2, 0, Shape::AfterQuote),
                ("x\n1,\"open\n2,3\n", 2, 1, Shape::Unclosed),
                ("\"a\" \n", 0, 0, Shape::AfterQuote),
            ] {
                let want = ShapeFault { row, cell, shape };
                assert_eq!(rows(text, masks), Err(want), "{masks:?} {text:?}");
            }
        }
    }

    /// The rows `Rows` reads from `bytes`: each one's start, cells and
    /// the next row's start, up to the end or the first fault.
    fn rows_read(bytes: &[u8], masks: Masks) -> Vec<(usize, Vec<Cell>, usize)> {
        let mut rows = Rows::new(bytes, 0, b',', masks);
        let mut out = Vec::new();
        loop {
            let row = rows.at();
            let mut cells = Vec::new();
            match rows.next(|_, c| cells.push(c)) {
                Some(Ok(_)) => out.push((row, cells, rows.at())),
                _ => return out,
            }
        }
    }

    proptest::proptest! {
        /// Rows of every quoting case, faults included: wherever the
        /// one-window path reads a row, it reads it as `Rows` does.
        #[test]
        fn the_window_path_reads_rows_as_rows_do(
            tokens in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "bc", "defghijklmnopqrstu", ",", "\"", "\"\"", "\"x,y\"",
                    "\n", "\r", "\r\n", "\"q\"\r\n", ",,",
                ]),
                0..120,
            ),
            columns in 1usize..6,
            wanted in proptest::num::u64::ANY,
        ) {
            // A last row long enough that every row before it has its
            // window of 64 bytes.
            let text = tokens.concat() + "\n" + &"z".repeat(64);
            let bytes = text.as_bytes();
            for masks in all() {
                for (row, cells, next) in rows_read(bytes, masks) {
                    let wanted = wanted & (u64::MAX >> (64 - columns));
                    let mut got = Vec::new();
                    let mut nth = Vec::new();
                    let window = Window::at(bytes, row, b',', masks, columns);
                    if let Some(window) = window {
                        window.cells(wanted, |n, c| got.push((n, c)));
                        for n in (0..columns).filter(|n| wanted >> n & 1 == 1) {
                            nth.push((n, window.nth(n, masks)));
                        }
                        let ended = window.next();
                        let want: Vec<(usize, Cell)> = cells
                            .into_iter()
                            .enumerate()
                            .filter(|(n, _)| wanted >> n & 1 == 1)
                            .collect();
                        proptest::prop_assert_eq!(ended, next, "{:?} {:?} {}", masks, text, row);
                        proptest::prop_assert_eq!(&got, &want, "{:?} {:?} {}", masks, text, row);
                        proptest::prop_assert_eq!(&nth, &want, "{:?} {:?} {}", masks, text, row);
                    }
                }
            }
        }
    }

    #[test]
    fn the_window_path_reads_the_usual_rows_and_leaves_the_rest() {
        let pad = "x".repeat(64);
        for (row, columns, read) in [
            ("a,\"b,c\",d\n", 3, true),
            ("a,\"b\"\r\n", 2, true),
            ("a,,\r\n", 3, true),
            ("\n", 1, true),
            ("a,\"b\"\"c\",d\n", 3, false),
            ("a,b\"c\n", 2, false),
            ("a,b,c\n", 2, false),
            ("a,\"b\nc\"\n", 2, true),
            (&format!("{pad},b\n"), 2, false),
        ] {
            let text = format!("{row}{pad}");
            for masks in all() {
                let got = Window::at(text.as_bytes(), 0, b',', masks, columns).map(|w| w.next());
                assert_eq!(got == Some(row.len()), read, "{masks:?} {row:?}");
            }
        }
    }

    #[test]
    fn row_starts_are_found_outside_quotes() {
        let text = b"a,\"b\nc\"\nd,e\n";
        assert_eq!(row_start_after(text, 0, 1), 8);
        assert_eq!(row_start_after(text, 0, 5), 8);
        assert_eq!(row_start_after(text, 0, 9), 12);
        assert_eq!(guess_row_start(text, 5), 5);
        assert_eq!(guess_row_start(text, 1), 5);
    }
}
