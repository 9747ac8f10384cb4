//! A column chunk's pages on their way to the `parquet` crate's column
//! readers, with what a delta encoding's headers claim held to what the
//! page holds.
//!
//! The crate's decoders for `DELTA_LENGTH_BYTE_ARRAY` and
//! `DELTA_BYTE_ARRAY` size a buffer of 4 bytes a value by the value count
//! in a delta header, before reading any value: a crafted page claiming
//! 2^32 values asks for gigabytes, and an allocation that fails aborts the
//! process rather than panicking. So each such page is refused here, as a
//! malformed file, unless its headers claim no more values than the page
//! header does, and no more than [`MAX_DELTA_VALUES`]. Every other page
//! passes as it is.

use parquet::basic::Encoding;
use parquet::column::page::{Page, PageMetadata, PageReader};
use parquet::column::reader::{get_column_reader, ColumnReader};
use parquet::errors::{ParquetError, Result};
use parquet::file::reader::RowGroupReader;

/// The reader of column `i` of `group`, its pages checked.
pub(super) fn column_reader(group: &dyn RowGroupReader, i: usize) -> Result<ColumnReader> {
    let column = group.metadata().schema_descr().column(i);
    let (def, rep) = (column.max_def_level(), column.max_rep_level());
    let pages = Checked::new(group.get_column_page_reader(i)?, def, rep);
    Ok(get_column_reader(column, Box::new(pages)))
}

/// The most values a delta-encoded page of byte arrays may hold: the
/// crate's buffer for them then takes at most 256 MiB. Writers cut pages
/// at about a megabyte or 20,000 rows.
const MAX_DELTA_VALUES: u64 = 1 << 26;

/// The most values a delta block may hold: writers put 128 in one.
const MAX_BLOCK: u64 = 1 << 20;

/// The pages of a column chunk, checked.
struct Checked {
    pages: Box<dyn PageReader>,
    /// The column's highest definition level (0 for a required column)
    /// and repetition level.
    levels: (i16, i16),
}

impl Checked {
    fn new(pages: Box<dyn PageReader>, max_def: i16, max_rep: i16) -> Checked {
        Checked {
            pages,
            levels: (max_def, max_rep),
        }
    }
}

impl Iterator for Checked {
    type Item = Result<Page>;

    fn next(&mut self) -> Option<Result<Page>> {
        self.get_next_page().transpose()
    }
}

impl PageReader for Checked {
    fn get_next_page(&mut self) -> Result<Option<Page>> {
        let page = self.pages.get_next_page()?;
        if let Some(page) = &page {
            check(page, self.levels).map_err(ParquetError::General)?;
        }
        Ok(page)
    }

    fn peek_next_page(&mut self) -> Result<Option<PageMetadata>> {
        self.pages.peek_next_page()
    }

    fn skip_next_page(&mut self) -> Result<()> {
        self.pages.skip_next_page()
    }

    fn at_record_boundary(&mut self) -> Result<bool> {
        self.pages.at_record_boundary()
    }
}

/// Refuses a delta-encoded page of byte arrays whose headers claim more
/// values than it holds; `levels` are the column's highest definition and
/// repetition levels.
fn check(page: &Page, levels: (i16, i16)) -> Result<(), String> {
    let Some((values, start)) = delta_values(page, levels)? else {
        return Ok(());
    };
    let most = u64::from(values).min(MAX_DELTA_VALUES);
    let Some(data) = page.buffer().get(start..) else {
        return Err("a page's levels run past its end".into());
    };
    let lengths = Delta::read(data, most)?;
    if page.encoding() == Encoding::DELTA_BYTE_ARRAY {
        // The prefixes' lengths, then the suffixes' lengths.
        Delta::read(&data[lengths.end(data)?..], most)?;
    }
    Ok(())
}

/// A delta-encoded page of byte arrays' value count and where its values
/// start; `None` for any other page.
fn delta_values(page: &Page, levels: (i16, i16)) -> Result<Option<(u32, usize)>, String> {
    Ok(Some(match page {
        Page::DataPage {
            buf,
            num_values,
            encoding,
            def_level_encoding,
            rep_level_encoding,
            ..
        } if is_delta_bytes(*encoding) => {
            // Version 1 pages hold their levels before their values.
            let mut at = 0;
            for (max, encoding) in [
                (levels.1, rep_level_encoding),
                (levels.0, def_level_encoding),
            ] {
                at += levels_len(buf, at, max, *encoding, *num_values)?;
            }
            (*num_values, at)
        }
        Page::DataPageV2 {
            num_values,
            encoding,
            def_levels_byte_len,
            rep_levels_byte_len,
            ..
        } if is_delta_bytes(*encoding) => {
            let at = u64::from(*def_levels_byte_len) + u64::from(*rep_levels_byte_len);
            (*num_values, at as usize)
        }
        _ => return Ok(None),
    }))
}

/// Whether the crate reads `encoding` into a buffer sized by its header.
fn is_delta_bytes(encoding: Encoding) -> bool {
    matches!(
        encoding,
        Encoding::DELTA_LENGTH_BYTE_ARRAY | Encoding::DELTA_BYTE_ARRAY
    )
}

/// The bytes a version 1 page's levels of `max` take from `at`.
fn levels_len(
    buf: &[u8],
    at: usize,
    max: i16,
    encoding: Encoding,
    values: u32,
) -> Result<usize, String> {
    if max <= 0 {
        return Ok(0);
    }
    match encoding {
        // A 4-byte length, then that many bytes.
        Encoding::RLE => {
            let Some(len) = buf.get(at..at + 4) else {
                return Err("a page's levels run past its end".into());
            };
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes"));
            Ok(4 + len as usize)
        }
        // Bit-packed, as many bits a value as `max` needs.
        _ => {
            let bits = u64::from(16 - max.leading_zeros());
            Ok((u64::from(values) * bits).div_ceil(8) as usize)
        }
    }
}

/// A `DELTA_BINARY_PACKED` header: values per block, miniblocks per
/// block, and the value count, the first value included.
struct Delta {
    block: u64,
    miniblocks: u64,
    values: u64,
    /// Where its blocks start.
    blocks: usize,
}

impl Delta {
    /// The header at the start of `data`, refused if malformed or if it
    /// claims more than `most` values.
    fn read(data: &[u8], most: u64) -> Result<Delta, String> {
        let mut at = 0;
        let block = vlq(data, &mut at)?;
        let miniblocks = vlq(data, &mut at)?;
        let values = vlq(data, &mut at)?;
        vlq(data, &mut at)?; // the first value, zigzag-encoded
        if values > most {
            return Err(format!(
                "a delta-encoded page claims {values} values, more than its {most}"
            ));
        }
        let fits = block > 0
            && block <= MAX_BLOCK
            && block % 128 == 0
            && miniblocks > 0
            && block % miniblocks == 0
            && (block / miniblocks) % 32 == 0;
        if !fits {
            return Err("a delta-encoded page's blocks are malformed".into());
        }
        Ok(Delta {
            block,
            miniblocks,
            values,
            blocks: at,
        })
    }

    /// Where the values' blocks end in `data`: each block a minimum delta,
    /// a bit width per miniblock, then the miniblocks that hold values.
    fn end(&self, data: &[u8]) -> Result<usize, String> {
        let past = || "a delta-encoded page ends inside its blocks".to_string();
        let per_miniblock = self.block / self.miniblocks;
        let (mut at, mut left) = (self.blocks, self.values.saturating_sub(1));
        while left > 0 {
            vlq(data, &mut at)?;
            let widths = data
                .get(at..at + self.miniblocks as usize)
                .ok_or_else(past)?;
            at += widths.len();
            for &width in widths {
                if left == 0 {
                    break;
                }
                at += (u64::from(width) * per_miniblock / 8) as usize;
                left = left.saturating_sub(per_miniblock);
            }
            if at > data.len() {
                return Err(past());
            }
        }
        Ok(at)
    }
}

/// The unsigned LEB128 integer at `*at` in `data`, `*at` moved past it.
fn vlq(data: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = data.get(*at) else {
            return Err("a delta-encoded page ends inside an integer".into());
        };
        *at += 1;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a delta-encoded page's header holds an integer of over 64 bits".into())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use parquet::basic::Compression;
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::ColumnPath;

    use super::*;
    use crate::parquet::tests::leb128;
    use crate::parquet::{Columns, File, ParquetError as Refusal, Stations};

    /// `rows` rows of 7 names, their station column in `encoding`, one
    /// page of them, uncompressed.
    fn written(encoding: Encoding, v2: bool, optional: bool, rows: usize) -> Vec<u8> {
        let repetition = if optional { "optional" } else { "required" };
        let schema = format!(
            "message m {{ {repetition} binary station (UTF8); {repetition} double measure; }}"
        );
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_column_encoding(ColumnPath::from("station"), encoding)
            .set_compression(Compression::UNCOMPRESSED)
            .set_writer_version(match v2 {
                true => WriterVersion::PARQUET_2_0,
                false => WriterVersion::PARQUET_1_0,
            })
            .build();
        let schema = Arc::new(parse_message_type(&schema).unwrap());
        let mut out = Vec::new();
        let mut writer = SerializedFileWriter::new(&mut out, schema, Arc::new(props)).unwrap();
        let mut group = writer.next_row_group().unwrap();
        let names: Vec<ByteArray> = (0..rows)
            .map(|i| ByteArray::from(format!("station {}", i % 7).as_str()))
            .collect();
        let values: Vec<f64> = (0..rows).map(|i| (i % 100) as f64 / 10.0).collect();
        let levels = vec![1i16; rows];
        let levels = optional.then_some(&levels[..]);
        let mut column = group.next_column().unwrap().unwrap();
        let typed = column.typed::<ByteArrayType>();
        typed.write_batch(&names, levels, None).unwrap();
        column.close().unwrap();
        let mut column = group.next_column().unwrap().unwrap();
        let typed = column.typed::<DoubleType>();
        typed.write_batch(&values, levels, None).unwrap();
        column.close().unwrap();
        group.close().unwrap();
        writer.close().unwrap();
        out
    }

    /// The station column's pages of `bytes`, and its levels.
    fn pages(bytes: &[u8]) -> (Vec<Page>, (i16, i16)) {
        let reader = SerializedFileReader::new(Bytes::from(bytes.to_vec())).unwrap();
        let group = reader.get_row_group(0).unwrap();
        let column = group.metadata().schema_descr().column(0);
        let levels = (column.max_def_level(), column.max_rep_level());
        let pages = group.get_column_page_reader(0).unwrap();
        (pages.map(Result::unwrap).collect(), levels)
    }

    /// Every row group of `bytes` read by brc: each name's row count.
    fn counts(bytes: Vec<u8>) -> Result<Vec<u64>, Refusal> {
        let file = File::open(Bytes::from(bytes), &Columns::default())?;
        let mut stations = Stations::default();
        for g in 0..file.row_groups() {
            file.aggregate(g, file.fetch(g).unwrap(), &mut stations)?;
        }
        let mut counts: Vec<u64> = stations.into_iter().map(|(_, s)| s.count).collect();
        counts.sort();
        Ok(counts)
    }

    /// A delta header of `values` values (a block of 128 in 4
    /// miniblocks, first value 0), LEB128-encoded.
    fn header(values: u64) -> Vec<u8> {
        let mut out = vec![0x80, 0x01, 0x04];
        leb128(&mut out, values);
        out.push(0);
        out
    }

    /// Each delta encoding of names, on pages of version 1 and 2, in
    /// required and optional columns.
    fn shapes() -> Vec<(Encoding, bool, bool)> {
        let encodings = [
            Encoding::DELTA_LENGTH_BYTE_ARRAY,
            Encoding::DELTA_BYTE_ARRAY,
        ];
        let flags = [(false, false), (false, true), (true, false), (true, true)];
        (encodings.iter())
            .flat_map(|&e| flags.map(|(v2, optional)| (e, v2, optional)))
            .collect()
    }

    /// `page` with its bytes from `at` on replaced by `tail`.
    fn with_tail(page: &Page, at: usize, tail: &[u8]) -> Page {
        let mut page = page.clone();
        let bytes = Bytes::from([&page.buffer()[..at], tail].concat());
        if let Page::DataPage { buf, .. } | Page::DataPageV2 { buf, .. } = &mut page {
            *buf = bytes;
        }
        page
    }

    #[test]
    fn delta_pages_as_writers_make_them_are_read() {
        for (encoding, v2, optional) in shapes() {
            let bytes = written(encoding, v2, optional, 200);
            let (pages, levels) = pages(&bytes);
            assert!(pages.iter().any(|p| p.encoding() == encoding));
            for page in &pages {
                assert_eq!(check(page, levels), Ok(()), "{encoding} {v2} {optional}");
            }
            let want = [28, 28, 28, 29, 29, 29, 29];
            assert_eq!(counts(bytes).unwrap(), want, "{encoding} {v2} {optional}");
        }
    }

    #[test]
    fn delta_headers_claiming_more_values_than_their_page_are_refused() {
        for (encoding, v2, optional) in shapes() {
            let (pages, levels) = pages(&written(encoding, v2, optional, 200));
            let page = pages.iter().find(|p| p.encoding() == encoding).unwrap();
            let (_, at) = delta_values(page, levels).unwrap().unwrap();
            let lengths = Delta::read(&page.buffer()[at..], 200).unwrap();
            assert_eq!(lengths.values, 200);
            // The first header, then (DELTA_BYTE_ARRAY) the second.
            let mut heads = vec![at];
            if encoding == Encoding::DELTA_BYTE_ARRAY {
                heads.push(at + lengths.end(&page.buffer()[at..]).unwrap());
            }
            for &head in &heads {
                let rest = &page.buffer()[head..];
                let blocks = Delta::read(rest, 200).unwrap().blocks;
                for claim in [201, MAX_DELTA_VALUES + 1, 1 << 40, u64::MAX >> 1] {
                    let tail = [&header(claim)[..], &rest[blocks..]].concat();
                    let bad = with_tail(page, head, &tail);
                    let refused = check(&bad, levels).unwrap_err();
                    assert!(
                        refused.contains(&format!("claims {claim} values")),
                        "{refused}"
                    );
                }
                let tail = [&header(200)[..], &rest[blocks..]].concat();
                assert_eq!(check(&with_tail(page, head, &tail), levels), Ok(()));
            }
        }
    }

    #[test]
    fn a_file_whose_delta_header_claims_too_many_values_is_malformed() {
        let mut bytes = written(Encoding::DELTA_LENGTH_BYTE_ARRAY, false, false, 200);
        // 200 values as LEB128 is C8 01; 255 takes two bytes too.
        let head = &header(200)[..5];
        let at = (bytes.windows(head.len()))
            .position(|w| w == head)
            .expect("the header");
        bytes[at + 3] = 0xFF;
        match counts(bytes) {
            Err(Refusal::Malformed(m)) => assert!(m.contains("claims 255 values"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_delta_headers_are_refused() {
        for (data, want) in [
            (&[0x80, 0x01][..], "ends inside an integer"),
            (&[0x81, 0x01, 0x04, 0x05, 0x00], "blocks are malformed"),
            (&[0x80, 0x01, 0x00, 0x05, 0x00], "blocks are malformed"),
            (&[0x80, 0x01, 0x08, 0x05, 0x00], "blocks are malformed"),
            (&[0xFF; 11], "over 64 bits"),
        ] {
            let refused = Delta::read(data, 200).map(|_| ()).unwrap_err();
            assert!(refused.contains(want), "{data:?}: {refused}");
        }
        // A block's minimum delta, then no bit widths.
        let data = [&header(300)[..], &[0x00]].concat();
        let head = Delta::read(&data, 300).unwrap();
        assert!(head
            .end(&data)
            .unwrap_err()
            .contains("ends inside its blocks"));
    }
}
