//! Parquet reading against a model of the rows, in every layout the
//! writer makes, and the dictionary path against the crate's decoding.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::Repetition;
use parquet::data_type::{
    ByteArray, ByteArrayType, DoubleType, FixedLenByteArray, FixedLenByteArrayType, FloatType,
    Int32Type, Int64Type,
};
use parquet::file::metadata::{
    ColumnChunkMetaDataBuilder, ParquetMetaDataReader, ParquetMetaDataWriter,
    RowGroupMetaDataBuilder,
};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::Type as SchemaType;

use super::write::{write, Layout};
use super::*;
use crate::stats::VALUE_LIMIT;

/// A small random number generator, so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Random rows over `names` names (some of them multi-byte), values mostly
/// text-like and some wide.
fn rows(n: usize, names: usize, seed: u64) -> Vec<(Vec<u8>, i64)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let k = rng.below(names as u64);
            let name = format!("station-{k}{}", if k.is_multiple_of(3) { "é" } else { "" });
            let t = match rng.below(10) {
                0 => rng.below(2 * VALUE_LIMIT as u64 + 1) as i64 - VALUE_LIMIT,
                _ => rng.below(1999) as i64 - 999,
            };
            (name.into_bytes(), t)
        })
        .collect()
}

/// The stats of `rows` by name.
fn model(rows: &[(Vec<u8>, i64)]) -> BTreeMap<Vec<u8>, Stats> {
    let mut m: BTreeMap<Vec<u8>, Stats> = BTreeMap::new();
    for (name, t) in rows {
        m.entry(name.clone())
            .and_modify(|s| s.add(*t))
            .or_insert(Stats::new(*t));
    }
    m
}

/// Every row group of `bytes` aggregated, through `aggregate`.
fn read_with(
    bytes: Vec<u8>,
    columns: &Columns,
    aggregate: impl Fn(&File, usize, &mut Stations) -> Result<(), ParquetError>,
) -> Result<BTreeMap<Vec<u8>, Stats>, ParquetError> {
    let file = File::open(Bytes::from(bytes), columns)?;
    let mut stations = Stations::default();
    for g in 0..file.row_groups() {
        aggregate(&file, g, &mut stations)?;
    }
    Ok(stations
        .into_iter()
        .map(|(n, s)| (n.into_vec(), s))
        .collect())
}

fn read(bytes: Vec<u8>) -> Result<BTreeMap<Vec<u8>, Stats>, ParquetError> {
    read_with(bytes, &Columns::default(), |f, g, s| {
        f.aggregate(g, f.fetch(g).unwrap(), s)
    })
}

fn written(rows: &[(Vec<u8>, i64)], layout: &Layout) -> Vec<u8> {
    let mut out = Vec::new();
    let rows = rows.iter().map(|(n, t)| (&n[..], *t as f64 / 10.0));
    write(&mut out, rows, layout).unwrap();
    out
}

/// The layouts a reader meets: dictionaries or not (and dictionaries that
/// overflow into plain pages), page versions, optional or required
/// columns, compression, many pages and row groups.
fn layouts() -> Vec<Layout> {
    let mut all = Vec::new();
    for dictionary in [true, false] {
        for v2_pages in [false, true] {
            for optional in [true, false] {
                all.push(Layout {
                    group_rows: 3_000,
                    page_rows: 500,
                    dictionary,
                    dictionary_bytes: 1 << 20,
                    v2_pages,
                    optional,
                    snappy: optional,
                });
            }
        }
    }
    all.push(Layout {
        dictionary_bytes: 256,
        page_rows: 100,
        ..Layout::default()
    });
    all.push(Layout::default());
    all
}

#[test]
fn every_layout_reads_as_the_rows_say() {
    for (i, layout) in layouts().into_iter().enumerate() {
        for names in [1, 40, 2_000] {
            let rows = rows(7_777, names, i as u64 * 31 + names as u64);
            assert_eq!(
                read(written(&rows, &layout)).unwrap(),
                model(&rows),
                "{layout:?}"
            );
        }
    }
}

#[test]
fn the_dictionary_path_agrees_with_the_crates_decoding() {
    // The hand-written index decoding against the crate's column readers,
    // row group by row group.
    for (i, layout) in layouts().into_iter().filter(|l| l.dictionary).enumerate() {
        let rows = rows(9_000, 300, 7 + i as u64);
        let bytes = written(&rows, &layout);
        let by_index = read_with(bytes.clone(), &Columns::default(), |f, g, s| {
            let group = f.group(g, f.fetch(g).unwrap())?;
            match dictionary::aggregate(&group, f, s) {
                Ok(Some(())) => Ok(()),
                Ok(None) if layout.dictionary_bytes < 1024 => {
                    f.aggregate(g, f.fetch(g).unwrap(), s)
                }
                Ok(None) => panic!("a dictionary-encoded row group was not read by index"),
                Err(_) => panic!("refused"),
            }
        });
        let by_crate = read_with(bytes, &Columns::default(), |f, g, s| {
            let group = f.group(g, f.fetch(g).unwrap())?;
            plain::aggregate(&group, f, s).map_err(|_| ParquetError::Malformed("plain".into()))
        });
        assert_eq!(by_index.unwrap(), by_crate.unwrap(), "{layout:?}");
    }
}

#[test]
fn a_row_group_too_large_to_pack_at_once_is_added_in_chunks() {
    // Values up to `VALUE_LIMIT` leave a packed sum room for fewer rows
    // than one row group of 140,000 has: it is added a chunk at a time.
    let rows = rows(140_000, 20, 11);
    let bytes = written(&rows, &Layout::default());
    let by_index = read_with(bytes, &Columns::default(), |f, g, s| {
        let group = f.group(g, f.fetch(g).unwrap())?;
        match dictionary::aggregate(&group, f, s) {
            Ok(Some(())) => Ok(()),
            _ => panic!("a dictionary-encoded row group was not read by index"),
        }
    });
    assert_eq!(by_index.unwrap(), model(&rows));
}

/// A file of one row group of `schema`'s two columns, each written by its
/// closure.
fn custom(
    schema: &str,
    key: impl FnOnce(&mut SerializedColumnWriter),
    value: impl FnOnce(&mut SerializedColumnWriter),
) -> Vec<u8> {
    written_as(parse_message_type(schema).unwrap(), key, value)
}

/// [`custom`] of a schema built rather than parsed.
fn written_as(
    schema: SchemaType,
    key: impl FnOnce(&mut SerializedColumnWriter),
    value: impl FnOnce(&mut SerializedColumnWriter),
) -> Vec<u8> {
    let schema = Arc::new(schema);
    let props = Arc::new(WriterProperties::builder().build());
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, schema, props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    key(&mut column);
    column.close().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    value(&mut column);
    column.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();
    out
}

/// Appends `v` as an unsigned LEB128 integer (Parquet's varint).
pub(super) fn leb128(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
}

fn names(names: &[&str]) -> Vec<ByteArray> {
    names.iter().map(|n| ByteArray::from(*n)).collect()
}

/// Writes the key column `a, b, a` (required).
fn three_keys(c: &mut SerializedColumnWriter) {
    let keys = names(&["a", "b", "a"]);
    c.typed::<ByteArrayType>()
        .write_batch(&keys, None, None)
        .unwrap();
}

/// The stats of `a` and `b` from a file of three rows.
fn ab(bytes: Vec<u8>) -> Result<Vec<(i64, i64, i128, u64)>, ParquetError> {
    let read = read(bytes)?;
    Ok(read
        .values()
        .map(|s| (s.min, s.max, s.sum, s.count))
        .collect())
}

#[test]
fn numbers_of_every_type_are_read_as_exact_tenths() {
    let schema = |t: &str| format!("message m {{ required binary station (STRING); {t} }}");
    let int32 = custom(
        &schema("required int32 measure (DECIMAL(9, 1));"),
        three_keys,
        |c| {
            let values = [-123, 5, 7];
            c.typed::<Int32Type>()
                .write_batch(&values, None, None)
                .unwrap();
        },
    );
    assert_eq!(ab(int32).unwrap(), [(-123, 7, -116, 2), (5, 5, 5, 1)]);
    let int64 = custom(&schema("required int64 measure;"), three_keys, |c| {
        let values = [-12, 99_999_999, 0];
        c.typed::<Int64Type>()
            .write_batch(&values, None, None)
            .unwrap();
    });
    assert_eq!(
        ab(int64).unwrap(),
        [
            (-120, 0, -120, 2),
            (
                VALUE_LIMIT - 9,
                VALUE_LIMIT - 9,
                (VALUE_LIMIT - 9).into(),
                1
            )
        ]
    );
    let float = custom(&schema("required float measure;"), three_keys, |c| {
        let values = [12.3f32, -0.1, 65.5];
        c.typed::<FloatType>()
            .write_batch(&values, None, None)
            .unwrap();
    });
    assert_eq!(ab(float).unwrap(), [(123, 655, 778, 2), (-1, -1, -1, 1)]);
    let fixed = custom(
        &schema("required fixed_len_byte_array(4) measure (DECIMAL(9, 2));"),
        three_keys,
        |c| {
            let values: Vec<FixedLenByteArray> = [-1230i32, 50, 0]
                .iter()
                .map(|v| FixedLenByteArray::from(v.to_be_bytes().to_vec()))
                .collect();
            c.typed::<FixedLenByteArrayType>()
                .write_batch(&values, None, None)
                .unwrap();
        },
    );
    assert_eq!(ab(fixed).unwrap(), [(-123, 0, -123, 2), (5, 5, 5, 1)]);
}

/// The row error a file of `station` and `measure` doubles gets.
fn row_error(bytes: Vec<u8>) -> (usize, u64, RowError) {
    match read(bytes) {
        Err(ParquetError::Row {
            row_group,
            row,
            kind,
        }) => (row_group, row, kind),
        other => panic!("{other:?}"),
    }
}

#[test]
fn refused_rows_are_named_by_row_group_and_row_in_every_layout() {
    let value = |found: &str| RowError::Value {
        column: "measure".into(),
        found: found.into(),
    };
    for layout in layouts() {
        // Row 4,200 is row 1,200 of row group 1 for 3,000-row groups.
        let (g, r) = match layout.group_rows {
            3_000 => (1, 1_200),
            _ => (0, 4_200),
        };
        for (bad, error) in [
            (f64::NAN, value("NaN")),
            (12.34, value("12.34")),
            (f64::INFINITY, value("inf")),
            (1e9, value("1000000000")),
        ] {
            let rows = rows(6_000, 50, 3);
            // The same value later too: the first is named.
            let bytes = with_value(&rows, &layout, &[(4_200, bad), (5_000, bad)]);
            assert_eq!(row_error(bytes), (g, r, error), "{layout:?}");
        }
        let mut rows = rows(6_000, 50, 3);
        rows[4_200].0 = b"a;b".to_vec();
        let name = RowError::Name {
            name: b"a;b".to_vec(),
        };
        assert_eq!(
            row_error(written(&rows, &layout)),
            (g, r, name),
            "{layout:?}"
        );
    }
}

/// `rows` written as `layout` says, with the doubles `values` at their
/// rows in place of theirs.
fn with_value(rows: &[(Vec<u8>, i64)], layout: &Layout, values: &[(usize, f64)]) -> Vec<u8> {
    let mut doubles: Vec<f64> = rows.iter().map(|(_, t)| *t as f64 / 10.0).collect();
    for &(i, v) in values {
        doubles[i] = v;
    }
    let mut out = Vec::new();
    let rows = rows.iter().zip(doubles).map(|((n, _), v)| (&n[..], v));
    write(&mut out, rows, layout).unwrap();
    out
}

#[test]
fn nulls_are_refused_at_their_row() {
    let schema = "message m { optional binary station (STRING); optional double measure; }";
    let bytes = custom(
        schema,
        |c| {
            let keys = names(&["a", "b", "c"]);
            c.typed::<ByteArrayType>()
                .write_batch(&keys, Some(&[1, 1, 1]), None)
                .unwrap();
        },
        |c| {
            let values = [1.5, 2.5];
            c.typed::<DoubleType>()
                .write_batch(&values, Some(&[1, 0, 1]), None)
                .unwrap();
        },
    );
    let null = RowError::Null {
        column: "measure".into(),
    };
    assert_eq!(row_error(bytes), (0, 1, null));
}

#[test]
fn columns_are_found_by_name_or_listed() {
    let rows = rows(10, 3, 1);
    let bytes = written(&rows, &Layout::default());
    let columns = Columns {
        key: "station".into(),
        value: "temp".into(),
    };
    let missing = read_with(bytes.clone(), &columns, |f, g, s| {
        f.aggregate(g, f.fetch(g).unwrap(), s)
    });
    assert_eq!(
        missing.unwrap_err().to_string(),
        "expected a column named `temp`, found columns `station`, `measure`"
    );
    let swapped = Columns {
        key: "measure".into(),
        value: "station".into(),
    };
    let wrong = read_with(bytes, &swapped, |f, g, s| {
        f.aggregate(g, f.fetch(g).unwrap(), s)
    })
    .unwrap_err();
    assert!(matches!(wrong, ParquetError::ColumnType { .. }), "{wrong}");
    // Other names, from `--columns`.
    let schema = "message m { required binary site (STRING); required double v; }";
    let bytes = custom(
        schema,
        |c| {
            let keys = names(&["x"]);
            c.typed::<ByteArrayType>()
                .write_batch(&keys, None, None)
                .unwrap();
        },
        |c| {
            c.typed::<DoubleType>()
                .write_batch(&[4.5], None, None)
                .unwrap();
        },
    );
    let columns = Columns {
        key: "site".into(),
        value: "v".into(),
    };
    let read = read_with(bytes, &columns, |f, g, s| {
        f.aggregate(g, f.fetch(g).unwrap(), s)
    })
    .unwrap();
    assert_eq!(read[&b"x".to_vec()], Stats::new(45));
}

#[test]
fn damaged_files_are_errors_never_panics() {
    let rows = rows(5_000, 30, 9);
    for layout in layouts() {
        let good = written(&rows, &layout);
        let mut rng = Rng(layout.page_rows as u64);
        for _ in 0..60 {
            let mut bad = good.clone();
            // Bytes of the pages, before the footer (its length is the
            // 4 bytes before the closing magic).
            let footer = u32::from_le_bytes(bad[bad.len() - 8..bad.len() - 4].try_into().unwrap());
            let pages = bad.len() - 8 - footer as usize;
            for _ in 0..1 + rng.below(4) {
                let at = 4 + rng.below(pages as u64 - 4) as usize;
                bad[at] = rng.below(256) as u8;
            }
            let _ = read(bad);
        }
        for cut in [0, 4, 100, good.len() / 2, good.len() - 5] {
            assert!(read(good[..cut].to_vec()).is_err());
        }
    }
}

/// `bytes` with its footer written anew, each row group's metadata passed
/// through `group` and each column chunk's through `edit`: footers no
/// writer makes.
fn refooted(
    bytes: &[u8],
    group: impl Fn(RowGroupMetaDataBuilder) -> RowGroupMetaDataBuilder,
    edit: impl Fn(ColumnChunkMetaDataBuilder) -> ColumnChunkMetaDataBuilder,
) -> Vec<u8> {
    let end = bytes.len() - 8;
    let footer = u32::from_le_bytes(bytes[end..end + 4].try_into().unwrap()) as usize;
    let metadata = ParquetMetaDataReader::decode_metadata(&bytes[end - footer..end]).unwrap();
    let mut builder = metadata.into_builder();
    let groups = (builder.take_row_groups().into_iter())
        .map(|g| {
            let chunks = (g.columns().iter())
                .map(|c| edit(c.clone().into_builder()).build().unwrap())
                .collect();
            group(g.into_builder().set_column_metadata(chunks))
                .build()
                .unwrap()
        })
        .collect();
    let metadata = builder.set_row_groups(groups).build();
    let mut out = bytes[..end - footer].to_vec();
    ParquetMetaDataWriter::new(&mut out, &metadata)
        .finish()
        .unwrap();
    out
}

#[test]
fn a_negative_column_chunk_start_or_length_is_malformed() {
    // Found by fuzzing: where a row group starts, which decides the row
    // groups a run reads, was asked of the crate outside the guard against
    // its panics, and a negative start panicked.
    let rows = rows(50, 3, 4);
    let good = written(&rows, &Layout::default());
    assert_eq!(read(refooted(&good, |g| g, |c| c)).unwrap(), model(&rows));
    let negative: [&dyn Fn(ColumnChunkMetaDataBuilder) -> ColumnChunkMetaDataBuilder; 2] =
        [&|c| c.set_dictionary_page_offset(Some(-4)), &|c| {
            c.set_total_compressed_size(-1)
        }];
    for edit in negative {
        let error = File::open(
            Bytes::from(refooted(&good, |g| g, edit)),
            &Columns::default(),
        );
        assert_eq!(
            error.err().unwrap().to_string(),
            "malformed Parquet: row group 0: a column chunk's start or length is negative"
        );
    }
}

#[test]
fn rows_other_than_the_footer_counts_are_malformed() {
    // Found by fuzzing: read row by row, a values' column holding rows past
    // the names' last was read only as far as the names go, and a row
    // group's rows were never held against its footer's count.
    let rows = rows(50, 3, 5);
    for layout in layouts().into_iter().filter(|l| !l.dictionary) {
        let good = written(&rows, &layout);
        for delta in [-1, 1] {
            let bad = refooted(&good, |g| g.set_num_rows(50 + delta), |c| c);
            assert_eq!(
                read(bad).unwrap_err().to_string(),
                "malformed Parquet: a column holds other rows than its row group",
                "{layout:?}"
            );
        }
    }
}

#[test]
fn a_missing_column_is_named_on_one_line_whatever_the_files_names() {
    // Found by fuzzing: the file's column names were listed as they are,
    // a line break and all.
    let column = |name: &str, physical| {
        let column = SchemaType::primitive_type_builder(name, physical);
        Arc::new(
            column
                .with_repetition(Repetition::REQUIRED)
                .build()
                .unwrap(),
        )
    };
    let fields = vec![
        column("station", Physical::BYTE_ARRAY),
        column("a\nb", Physical::DOUBLE),
    ];
    let schema = SchemaType::group_type_builder("m").with_fields(fields);
    let bytes = written_as(schema.build().unwrap(), three_keys, |c| {
        c.typed::<DoubleType>()
            .write_batch(&[1.0, 2.0, 3.0], None, None)
            .unwrap();
    });
    assert_eq!(
        read(bytes).unwrap_err().to_string(),
        "expected a column named `measure`, found columns `station`, `a\\nb`"
    );
}

#[test]
fn files_the_crate_refuses_are_refused_by_index_too() {
    // Found by fuzzing (fuzz/fuzz_targets/parquet.rs): the dictionary path
    // read each of these where the crate's readers refuse them: a zero
    // run header past which indices went on, v2 pages whose levels belie
    // their `num_nulls`, pages past the row group's rows.
    for name in [
        "hybrid-zero-run",
        "v2-levels",
        "v2-num-nulls",
        "pages-past-rows",
    ] {
        let path = format!(
            "{}/tests/data/parquet/{name}.parquet",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        assert!(read(bytes).is_err(), "{name} was read");
    }
}
