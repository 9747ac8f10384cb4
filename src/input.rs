//! Getting an input's bytes: a file mapped into memory.

use std::fs::File;
use std::io;
use std::path::Path;

use memmap2::Mmap;

/// The bytes of an input file, mapped read-only.
pub struct Input {
    // `None` for an empty file, which cannot be mapped.
    map: Option<Mmap>,
}

impl Input {
    /// Opens and maps a file.
    pub fn open(path: &Path) -> io::Result<Input> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a directory",
            ));
        }
        if meta.len() == 0 {
            return Ok(Input { map: None });
        }
        // SAFETY: the map is read-only and private to this process. Another
        // process truncating or rewriting the file while we run could change
        // or remove pages under us (SIGBUS); that is the documented contract
        // of every mmap-based reader (ripgrep's included) and brc's inputs
        // are files at rest. No `&mut` aliasing is created.
        let map = unsafe { Mmap::map(&file)? };
        // Lines are consumed front to back, so ask for aggressive read-ahead.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Input { map: Some(map) })
    }

    /// The input's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}
