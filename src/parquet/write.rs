//! Writing rows as a Parquet file of a `station` string column and a
//! `measure` double column, laid out as chosen: for `brc generate --format
//! parquet`, which writes files as the One Trillion Row Challenge's
//! generator does (pandas and pyarrow's defaults), and for the tests,
//! which vary every layout a reader meets.

use std::io::Write;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

/// How a file is laid out.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Rows per row group (pyarrow's default: 1,048,576).
    pub group_rows: usize,
    /// Rows per data page at most.
    pub page_rows: usize,
    /// Whether columns are dictionary-encoded (falling back to plain
    /// pages when a dictionary passes `dictionary_bytes`).
    pub dictionary: bool,
    /// A dictionary page's size limit.
    pub dictionary_bytes: usize,
    /// Data pages of format version 2 rather than 1.
    pub v2_pages: bool,
    /// Columns declared optional (nullable, as pandas writes them) rather
    /// than required.
    pub optional: bool,
    /// Snappy-compressed pages, or none.
    pub snappy: bool,
}

impl Default for Layout {
    /// The One Trillion Row Challenge's files: pandas' `to_parquet` with
    /// pyarrow's defaults.
    fn default() -> Layout {
        Layout {
            group_rows: 1 << 20,
            page_rows: 20_000,
            dictionary: true,
            dictionary_bytes: 1 << 20,
            v2_pages: false,
            optional: true,
            snappy: true,
        }
    }
}

/// Writes `rows` (a name and its value) to `out` as a Parquet file laid
/// out as `layout` says. A value of `t` tenths is written as `t as f64 /
/// 10.0`, the double nearest to it.
pub fn write<'a, W: Write + Send>(
    out: W,
    rows: impl IntoIterator<Item = (&'a [u8], f64)>,
    layout: &Layout,
) -> parquet::errors::Result<()> {
    let repetition = if layout.optional {
        "optional"
    } else {
        "required"
    };
    let schema = format!(
        "message schema {{ {repetition} binary station (STRING); {repetition} double measure; }}"
    );
    let props = WriterProperties::builder()
        .set_writer_version(match layout.v2_pages {
            true => WriterVersion::PARQUET_2_0,
            false => WriterVersion::PARQUET_1_0,
        })
        .set_compression(match layout.snappy {
            true => Compression::SNAPPY,
            false => Compression::UNCOMPRESSED,
        })
        .set_dictionary_enabled(layout.dictionary)
        .set_dictionary_page_size_limit(layout.dictionary_bytes)
        .set_data_page_row_count_limit(layout.page_rows)
        .set_write_batch_size(layout.page_rows.min(1024))
        .build();
    let schema = Arc::new(parse_message_type(&schema)?);
    let mut writer = SerializedFileWriter::new(out, schema, Arc::new(props))?;
    let mut rows = rows.into_iter().peekable();
    let (mut names, mut values) = (Vec::new(), Vec::new());
    while rows.peek().is_some() {
        names.clear();
        values.clear();
        for (name, value) in rows.by_ref().take(layout.group_rows.max(1)) {
            names.push(ByteArray::from(name.to_vec()));
            values.push(value);
        }
        let levels = vec![1i16; names.len()];
        let levels = layout.optional.then_some(&levels[..]);
        let mut group = writer.next_row_group()?;
        let mut column = group.next_column()?.expect("the station column");
        column
            .typed::<ByteArrayType>()
            .write_batch(&names, levels, None)?;
        column.close()?;
        let mut column = group.next_column()?.expect("the measure column");
        column
            .typed::<DoubleType>()
            .write_batch(&values, levels, None)?;
        column.close()?;
        group.close()?;
    }
    writer.close()?;
    Ok(())
}
