//! The parts of the inputs a run reads ([`Inputs::parts`]): each input
//! opened in its turn, with the window of its bytes read; a delimited input
//! outside the window read up to its header; and what locates an error in
//! a part read from past its input's first line ([`Located`]).

use std::io;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::list::{clip, cut, reads, Inputs, Listed, Source};
#[cfg(feature = "remote")]
use super::ranged;
use super::{Input, Opened, Part};
use crate::delimited::run::HeaderOnly;
use crate::driver::RunError;
#[cfg(feature = "remote")]
use crate::error::Error;
#[cfg(feature = "remote")]
use std::{cell::RefCell, collections::BTreeMap, rc::Rc};

impl Inputs {
    /// The inputs this run reads, opened in turn as the iterator is
    /// advanced, each with its index in the list and the part of it read;
    /// and what locates an error in a part read from past its input's
    /// first line but not mapped (a text object's range).
    pub(super) fn parts(self) -> (impl Iterator<Item = (usize, io::Result<Part>)>, Located) {
        let placed: Vec<u64> = self.starts().map(|(at, _)| at).collect();
        let delimited = self.dialect.is_some();
        // Delimited rows are not cut by ranged requests (`ranged::open`).
        #[cfg(feature = "remote")]
        let lines = !delimited;
        let Inputs {
            listed,
            window,
            consumed,
            ..
        } = self;
        // What the run reads after each input.
        let mut rest: Vec<u64> = (listed.iter().zip(&placed))
            .map(|(l, &at)| clip(at, l.size, &window))
            .collect();
        let mut after = 0;
        for r in rest.iter_mut().rev() {
            (*r, after) = (after, after + *r);
        }
        let located = Located::default();
        #[cfg(feature = "remote")]
        let skipped = Rc::clone(&located.skipped);
        let parts = (listed.into_iter().enumerate()).filter_map(move |(i, listed)| {
            let at = placed[i];
            // Parquet files are read apart (`Inputs::parquet`).
            if listed.parquet {
                return None;
            }
            // A delimited input outside the window is still read up to its
            // header, which must agree with the others' in a part of the
            // inputs as in the whole, where each run can read it apart.
            let header_apart = delimited && listed.opens_apart();
            if !reads(&window, at, listed.size) {
                return header_apart.then(|| (i, header_only(listed, &consumed)));
            }
            let size = listed.size;
            #[cfg(feature = "remote")]
            if let Some(object) = &listed.object {
                // Text objects are cut by ranged requests, or read whole
                // where they cannot be (`ranged`).
                return match ranged::open(object, cut(&window, at, size), lines, &consumed) {
                    // Read whole by another window: its header here.
                    Ok(None) if header_apart => Some((i, header_only(listed, &consumed))),
                    Ok(None) => None,
                    Ok(Some((opened, part_skipped))) => {
                        if let Some(part_skipped) = part_skipped {
                            skipped.borrow_mut().insert(i, part_skipped);
                        }
                        let (window, rest) = (0..u64::MAX, rest[i]);
                        Some((
                            i,
                            Ok(Part {
                                opened,
                                window,
                                rest,
                            }),
                        ))
                    }
                    Err(e) => Some((i, Err(e))),
                };
            }
            let opened = match open(listed, &consumed) {
                Ok(input) => input.opened,
                Err(e) => return Some((i, Err(e))),
            };
            let window = match opened {
                Opened::Mapped { .. } => cut(&window, at, size),
                // Not to be cut: read whole where its first byte is.
                Opened::Stream(_) if window.contains(&at) => 0..u64::MAX,
                // Read by the window holding its first byte; its header
                // as any other input's outside the window.
                stream @ Opened::Stream(_) if header_apart => {
                    return Some((i, Ok(header_part(stream))));
                }
                Opened::Stream(_) => return None,
            };
            let rest = rest[i];
            Some((
                i,
                Ok(Part {
                    opened,
                    window,
                    rest,
                }),
            ))
        });
        (parts, located)
    }
}

/// The part of a delimited input outside a run's window: its header only
/// ([`HeaderOnly`]: a mapped file's window holds no line; a stream ends
/// after its first row).
fn header_only(listed: Listed, consumed: &Arc<AtomicU64>) -> io::Result<Part> {
    #[cfg(feature = "remote")]
    let opened = match &listed.object {
        Some(object) => ranged::open_whole(object, consumed)?,
        None => open(listed, consumed)?.opened,
    };
    #[cfg(not(feature = "remote"))]
    let opened = open(listed, consumed)?.opened;
    Ok(header_part(opened))
}

/// An opened input as the part of it read for its header only: a mapped
/// file with a window that holds no line, a stream cut after its first row.
fn header_part(opened: Opened) -> Part {
    let opened = match opened {
        Opened::Stream(reader) => Opened::Stream(Box::new(HeaderOnly::new(reader))),
        mapped => mapped,
    };
    Part {
        opened,
        window: 0..0,
        rest: 0,
    }
}

/// Where the errors of parts read from past their input's first line,
/// other than mapped files', are: for each such input (a text object's
/// range), what counts the lines before its part, on the error path only.
#[derive(Default)]
pub(super) struct Located {
    #[cfg(feature = "remote")]
    skipped: Rc<RefCell<BTreeMap<usize, ranged::Skipped>>>,
}

impl Located {
    /// `failed` with its line number and offset counted from its input's
    /// first line; failing to count them is the run's error instead.
    pub(super) fn locate(&self, failed: RunError) -> RunError {
        #[cfg(feature = "remote")]
        if let Error::Data(e) = &failed.error {
            if let Some(skipped) = self.skipped.borrow().get(&failed.input) {
                let error = match skipped.locate(e.clone()) {
                    Ok(e) => Error::Data(e),
                    Err(e) => Error::Io(e),
                };
                let input = failed.input;
                return RunError { input, error };
            }
        }
        failed
    }
}

/// Opens a listed input, counting the bytes read into `consumed`.
fn open(listed: Listed, consumed: &Arc<AtomicU64>) -> io::Result<Input> {
    if let Some(e) = listed.error {
        return Err(e);
    }
    match &listed.source {
        Source::Stdin => Input::stdin_counted(Arc::clone(consumed)),
        Source::File(path) => Input::open_counted(path, Arc::clone(consumed)),
        // A listed object is opened by `ranged::open`.
        Source::Url(_) => unreachable!("a listed URL has its object or its error"),
    }
}
