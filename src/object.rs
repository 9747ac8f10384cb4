//! Objects in object storage, named by URL (`s3://bucket/key`,
//! `http(s)://host/path`): listed, sized, and read by byte ranges or as a
//! stream, through the `object_store` crate.
//!
//! The crate is asynchronous; brc's readers are threads that block. Every
//! request here is run to its end on one small runtime shared by the
//! process ([`block_on`]), so a worker thread waits for its bytes as it
//! would for a file's. S3 takes its settings from the usual `AWS_*`
//! variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SKIP_SIGNATURE=true` for anonymous
//! access, …); an `http://` endpoint is allowed when it is named so.
//! Failures become one-line I/O errors: a request is retried briefly, not
//! for minutes, so a server that is down fails the run in seconds.

use std::future::Future;
use std::io::{self, BufRead, Read};
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::{Buf, Bytes};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientConfigKey, ClientOptions, GetOptions, GetRange, ObjectStore,
    ObjectStoreExt, RetryConfig,
};

/// One object: where it is, and its size when listed.
pub(crate) struct Object {
    store: Arc<dyn ObjectStore>,
    path: Path,
    url: String,
    size: u64,
    /// Its first bytes, as probed when listed: what they tell of how it
    /// is stored (compressed, after a byte-order mark) needs no request.
    head: Bytes,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} bytes)", self.url, self.size)
    }
}

/// How many objects' ends are probed at once when a prefix is listed.
const PROBES_IN_FLIGHT: usize = 32;

impl Object {
    /// The object's URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Its size in bytes, as listed.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Its first bytes (up to the number probed when listed; fewer if it
    /// is smaller).
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }

    /// Bytes `range` of the object; fewer than asked is an error.
    pub(crate) fn range(&self, range: Range<u64>) -> io::Result<Bytes> {
        let bytes = block_on(self.store.get_range(&self.path, range.clone()))
            .map_err(|e| failed(&self.url, e))?;
        full(bytes, &range)
    }

    /// Bytes `ranges` of the object, fetched together.
    pub(crate) fn ranges(&self, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
        let fetched = block_on(self.store.get_ranges(&self.path, ranges));
        let fetched = fetched.map_err(|e| failed(&self.url, e))?;
        (fetched.into_iter().zip(ranges))
            .map(|(bytes, range)| full(bytes, range))
            .collect()
    }

    /// The whole object as a stream of its bytes, fetched as they are read.
    pub(crate) fn reader(&self) -> io::Result<impl Read + Send + 'static> {
        let got = block_on(self.store.get(&self.path)).map_err(|e| failed(&self.url, e))?;
        Ok(Streamed {
            url: self.url.clone(),
            left: got.range.end - got.range.start,
            at: got.range.start,
            stream: got.into_stream(),
            held: Bytes::new(),
        })
    }

    /// Bytes `range` of the object as a stream, fetched as they are read
    /// (to its end when `range.end` is `u64::MAX`), so that a range of any
    /// length is read in bounded memory. A reply of another range, or a
    /// body that ends before the range does, is an error.
    pub(crate) fn stream(&self, range: Range<u64>) -> io::Result<Streamed> {
        let asked = match range.end {
            u64::MAX => GetRange::Offset(range.start),
            _ => GetRange::Bounded(range.clone()),
        };
        let options = GetOptions {
            range: Some(asked),
            ..GetOptions::default()
        };
        let got = block_on(self.store.get_opts(&self.path, options));
        let got = got.map_err(|e| failed(&self.url, e))?;
        // The crate checks the reply's range against the object's size as
        // the server states it: a bounded range past a shrunk object's end
        // comes back shorter, which is no longer the bytes listed.
        if range.end != u64::MAX && got.range != range {
            return Err(cut_short(got.range.end - got.range.start, &range));
        }
        Ok(Streamed {
            url: self.url.clone(),
            left: got.range.end - got.range.start,
            at: got.range.start,
            stream: got.into_stream(),
            held: Bytes::new(),
        })
    }

    /// The object's first and last `n` bytes (fewer if it is smaller).
    async fn ends(&self, n: u64) -> object_store::Result<(Bytes, Bytes)> {
        let n = n.min(self.size);
        if n == 0 {
            return Ok((Bytes::new(), Bytes::new()));
        }
        // Two requests, not `get_ranges`, which fetches ranges less than
        // 1 MiB apart as one: all of a smaller object, for each shard
        // that lists it.
        let head = self.store.get_range(&self.path, 0..n);
        let tail = self.store.get_range(&self.path, self.size - n..self.size);
        futures::try_join!(head, tail)
    }
}

/// `bytes`, checked to be all of `range`: a server that sends fewer cut
/// the object short.
fn full(bytes: Bytes, range: &Range<u64>) -> io::Result<Bytes> {
    match bytes.len() as u64 == range.end - range.start {
        true => Ok(bytes),
        false => Err(cut_short(bytes.len() as u64, range)),
    }
}

/// `got` bytes of `range` came, not all of them.
fn cut_short(got: u64, range: &Range<u64>) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "the object was cut short: {got} bytes from byte {}, {} expected",
            range.start,
            range.end - range.start
        ),
    )
}

/// The objects `url` names, each with its first and last `probe` bytes
/// (for telling their format): the object itself, or, for a URL ending in
/// `/`, every object under that prefix (not hidden: no part of the key
/// after the prefix starts with `.`), in the byte order of their keys.
pub(crate) fn list(url: &str, probe: u64) -> io::Result<Vec<(Object, (Bytes, Bytes))>> {
    let (store, path) = open(url)?;
    let listing = url.ends_with('/');
    if listing && !url[..5].eq_ignore_ascii_case("s3://") {
        let e = "an http(s) URL names one object: only s3:// URLs ending in `/` are listed";
        return Err(io::Error::new(io::ErrorKind::InvalidInput, e));
    }
    let objects: Vec<Object> = if listing {
        let base = url.trim_end_matches('/');
        let prefix = path.clone();
        let listed = block_on(store.list(Some(&prefix)).try_collect::<Vec<_>>());
        let listed = listed.map_err(|e| failed(url, e))?;
        let mut objects: Vec<Object> = (listed.into_iter())
            .filter(|meta| {
                let rest = meta.location.prefix_match(&prefix);
                rest.is_some_and(|mut parts| parts.all(|p| !p.as_ref().starts_with('.')))
            })
            .map(|meta| {
                let key = meta.location.as_ref();
                let tail = key.strip_prefix(prefix.as_ref()).unwrap_or(key);
                Object {
                    store: Arc::clone(&store),
                    url: format!("{base}/{}", tail.trim_start_matches('/')),
                    path: meta.location,
                    size: meta.size,
                    head: Bytes::new(),
                }
            })
            .collect();
        objects.sort_unstable_by(|a, b| a.path.as_ref().cmp(b.path.as_ref()));
        if objects.is_empty() {
            // No directory to be empty: a prefix with no object under it
            // is most likely mistyped.
            let e = "no object under this prefix";
            return Err(io::Error::new(io::ErrorKind::NotFound, e));
        }
        objects
    } else {
        let meta = block_on(store.head(&path)).map_err(|e| failed(url, e))?;
        vec![Object {
            store,
            path,
            url: url.to_string(),
            size: meta.size,
            head: Bytes::new(),
        }]
    };
    let probes = stream::iter(objects.iter().map(|o| o.ends(probe)))
        .buffered(PROBES_IN_FLIGHT)
        .try_collect::<Vec<_>>();
    let ends = block_on(probes).map_err(|e| failed(url, e))?;
    let objects = objects.into_iter().zip(ends).map(|(mut object, ends)| {
        object.head = ends.0.clone();
        (object, ends)
    });
    Ok(objects.collect())
}

/// The store holding `url`'s object, and its path there. An S3 key is
/// taken as written, as the AWS command line takes it (`#`, `?` and `%`
/// are part of it); an HTTP(S) URL's path is a URL's.
fn open(url: &str) -> io::Result<(Arc<dyn ObjectStore>, Path)> {
    let bad = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: Duration::from_secs(20),
    };
    if let Some(rest) = url
        .get(5..)
        .filter(|_| url[..5].eq_ignore_ascii_case("s3://"))
    {
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() || (key.is_empty() && !url.ends_with('/')) {
            let e = "expected s3://bucket/key, or s3://bucket/prefix/ for the objects under it";
            return Err(bad(e.into()));
        }
        let key = key.strip_suffix('/').unwrap_or(key);
        let path = Path::parse(key).map_err(|e| bad(format!("not an S3 key: {e}")))?;
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_retry(retry);
        // An endpoint named `http://` (a local server, MinIO) is what the
        // user asked for: allow it, as the AWS command line does.
        let endpoint = builder.get_config_value(&AmazonS3ConfigKey::Endpoint);
        if endpoint.is_some_and(|e| e.starts_with("http://")) {
            builder = builder.with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
                "true",
            );
        }
        let store = builder.build().map_err(|e| bad(describe(&e)))?;
        return Ok((Arc::new(store), path));
    }
    let parsed = url::Url::parse(url).map_err(|e| bad(format!("not a valid URL: {e}")))?;
    let path = Path::from_url_path(parsed.path()).map_err(|e| bad(e.to_string()))?;
    let builder = HttpBuilder::new()
        .with_url(&parsed[..url::Position::BeforePath])
        .with_retry(retry)
        .with_client_options(ClientOptions::new().with_allow_http(true));
    let store = builder.build().map_err(|e| bad(describe(&e)))?;
    Ok((Arc::new(store), path))
}

/// The runtime every request runs on: two threads, started on first use.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("brc-object")
            .enable_all()
            .build()
            .expect("a runtime for object storage")
    })
}

/// Runs `future` to its end, blocking the calling thread.
fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// An object's bytes, read as its body arrives.
pub(crate) struct Streamed {
    url: String,
    stream: BoxStream<'static, object_store::Result<Bytes>>,
    /// What arrived and is not read yet.
    held: Bytes,
    /// The object's byte that `held` starts at, and how many bytes of the
    /// reply are still to come after it: a body that ends before them was
    /// cut short.
    at: u64,
    left: u64,
}

impl BufRead for Streamed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.held.is_empty() {
            match block_on(self.stream.next()) {
                Some(Ok(bytes)) => {
                    self.left = self.left.saturating_sub(bytes.len() as u64);
                    self.held = bytes;
                }
                Some(Err(e)) => return Err(failed(&self.url, e)),
                None if self.left > 0 => {
                    let e = format!(
                        "the object was cut short: its reply ended at byte {}, {} bytes early",
                        self.at, self.left
                    );
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, e));
                }
                None => break,
            }
        }
        Ok(&self.held)
    }

    fn consume(&mut self, n: usize) {
        self.held.advance(n);
        self.at += n as u64;
    }
}

impl Read for Streamed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let held = self.fill_buf()?;
        let n = buf.len().min(held.len());
        buf[..n].copy_from_slice(&held[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// The address of the instance metadata service, where AWS's clients
/// look for credentials that the environment does not give.
const INSTANCE_METADATA: &str = "169.254.169.254";

/// A failed request for an object at `url` as a one-line I/O error: the
/// request, and what the server or the connection said.
fn failed(url: &str, e: object_store::Error) -> io::Error {
    use object_store::Error as E;
    let text = describe(&e);
    let status = |code: &str| text.contains(&format!(": {code} "));
    // With no keys in the environment, the crate asks the instance
    // metadata service for credentials; off a cloud instance that request
    // is the one that fails, and naming it alone would puzzle.
    let metadata = text.contains(INSTANCE_METADATA);
    let kind = match e {
        E::NotFound { .. } => io::ErrorKind::NotFound,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => io::ErrorKind::PermissionDenied,
        _ if metadata => io::ErrorKind::PermissionDenied,
        _ if status("404") => io::ErrorKind::NotFound,
        _ if status("401") || status("403") => io::ErrorKind::PermissionDenied,
        _ => io::ErrorKind::Other,
    };
    // A body that ends early, or a range reply shorter than asked (which
    // the crate checks itself).
    let short = ["end of file before message length", "Requested "]
        .iter()
        .any(|sign| text.contains(sign));
    if short {
        let why = text.rsplit(": ").next().unwrap_or(&text);
        return io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the object was cut short ({why})"),
        );
    }
    let message = match kind {
        _ if metadata => format!(
            "no AWS credentials: none in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and no \
             instance metadata service gave any ({text}); set them, or AWS_SKIP_SIGNATURE=true \
             for a public bucket"
        ),
        io::ErrorKind::NotFound => format!("no such bucket or key ({text})"),
        io::ErrorKind::PermissionDenied if url.starts_with("s3://") => {
            format!("access refused ({text}); check the AWS_* credentials")
        }
        io::ErrorKind::PermissionDenied => format!("access refused ({text})"),
        _ => text,
    };
    io::Error::new(kind, message)
}

/// What the `object_store` crate says of a failed request, on one line:
/// `VERB URL: reason`, the reason a status with the server's error code
/// and message, or the connection's last word; anything else whole.
fn describe(e: &object_store::Error) -> String {
    let mut full = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let next = s.to_string();
        if !full.contains(&next) {
            full = format!("{full}: {next}");
        }
        source = s.source();
    }
    let full = full.split_whitespace().collect::<Vec<_>>().join(" ");
    let between = |open: &str, close: &str| {
        let from = full.find(open)? + open.len();
        let len = full[from..].find(close)?;
        Some(&full[from..from + len])
    };
    // The innermost request named (a listing names its GET after itself).
    let request = full.rfind("performing ").and_then(|at| {
        let rest = &full[at + "performing ".len()..];
        let mut words = rest.split(' ');
        Some(format!("{} {}", words.next()?, words.next()?))
    });
    let reason = match between("status code: ", ":") {
        Some(status) => {
            let code = between("<Code>", "</Code>");
            let message = between("<Message>", "</Message>");
            match (code, message) {
                (Some(c), Some(m)) => format!("{status}, {c}: {m}"),
                _ => status.to_string(),
            }
        }
        None if request.is_some() => {
            let last = full.rsplit(": ").next().unwrap_or(&full);
            match between("after ", " retries") {
                Some(n) => format!("{last}, after {n} retries"),
                None => last.to_string(),
            }
        }
        None => return cut(full, 300),
    };
    match request {
        Some(request) => cut(format!("{request}: {reason}"), 300),
        None => cut(reason, 300),
    }
}

/// `line`, cut to at most `max` bytes (and an ellipsis).
fn cut(mut line: String, max: usize) -> String {
    if line.len() > max {
        let mut at = max;
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        line.truncate(at);
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(message: &str) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: message.into(),
        }
    }

    #[test]
    fn a_status_is_the_request_and_the_servers_code_and_message() {
        let e = generic(
            "Error performing list request: Error performing GET http://h/b?list-type=2 in 3ms \
             - Server returned non-2xx status code: 404 Not Found: <?xml version=\"1.0\"?>\n\
             <Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist\
             </Message></Error>",
        );
        let e = failed("s3://b/", e);
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            "no such bucket or key (GET http://h/b?list-type=2: 404 Not Found, \
             NoSuchBucket: The specified bucket does not exist)"
        );
    }

    #[test]
    fn a_refusal_names_the_credentials_for_s3_only() {
        let text = "Error performing HEAD http://h/b/k in 3ms - Server returned non-2xx status \
                    code: 403 Forbidden: ";
        let s3 = failed("s3://b/k", generic(text)).to_string();
        assert_eq!(
            s3,
            "access refused (HEAD http://h/b/k: 403 Forbidden); check the AWS_* credentials"
        );
        let http = failed("http://h/b/k", generic(text)).to_string();
        assert_eq!(http, "access refused (HEAD http://h/b/k: 403 Forbidden)");
    }

    #[test]
    fn no_credentials_anywhere_is_said_so() {
        let text = "Error performing PUT http://169.254.169.254/latest/api/token in 1ms - \
                    Server returned non-2xx status code: 403 Forbidden: ";
        let e = failed("s3://b/k", generic(text));
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(
            e.to_string(),
            "no AWS credentials: none in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and no \
             instance metadata service gave any (PUT http://169.254.169.254/latest/api/token: \
             403 Forbidden); set them, or AWS_SKIP_SIGNATURE=true for a public bucket"
        );
    }

    #[test]
    fn a_connection_refused_is_one_line_in_a_few_retries() {
        // Port 1 on the loopback: nothing listens there.
        let started = std::time::Instant::now();
        let e = list("http://127.0.0.1:1/b/k", 4).unwrap_err().to_string();
        assert!(
            e.starts_with("HEAD http://127.0.0.1:1/b/k: Connection refused"),
            "{e}"
        );
        assert!(e.ends_with("after 3 retries"), "{e}");
        assert!(!e.contains('\n'));
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_reply_cut_short_is_an_error() {
        let e = full(Bytes::from_static(b"abc"), &(10..20)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(
            e.to_string(),
            "the object was cut short: 3 bytes from byte 10, 10 expected"
        );
    }

    #[test]
    fn a_long_message_is_cut_on_a_character() {
        let line = cut("é".repeat(200), 301);
        assert!(line.len() <= 301 + '…'.len_utf8() && line.ends_with('…'));
    }

    #[test]
    fn an_s3_key_is_taken_as_written() {
        for (url, key) in [
            ("s3://b/p/q#r.txt", "p/q#r.txt"),
            ("s3://b/my%20file?.txt", "my%20file?.txt"),
            ("s3://b/東京/a b.txt", "東京/a b.txt"),
            ("S3://b/prefix/", "prefix"),
            ("s3://b/", ""),
        ] {
            let (_, path) = open(url).unwrap();
            assert_eq!(path.as_ref(), key, "{url}");
        }
        for url in ["s3://b", "s3:///k", "s3://b/a//c"] {
            let e = open(url).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{url}: {e}");
        }
    }

    #[test]
    fn a_body_cut_short_says_so() {
        for text in [
            "HTTP error: request or response body error: error reading a body from connection: \
             end of file before message length reached",
            "Requested 0..5067, got 0..10",
        ] {
            let e = failed("http://h/k", generic(text));
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
            assert!(
                e.to_string().starts_with("the object was cut short ("),
                "{e}"
            );
        }
    }

    #[test]
    fn only_s3_urls_are_listed() {
        let e = list("https://example.invalid/data/", 4).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
