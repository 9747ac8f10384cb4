//! The library's layers, checked: src/lib.rs lists its modules from the
//! bottom layer up, each using only modules listed before it, and this
//! test holds every file of src/ (but the binary's) to that list.
//!
//! It reads the paths each file names (every `use` tree, and every path
//! starting with `crate`, `self` or `super`), leaving out comments, string
//! literals and the file's test module, which may use any layer. A file
//! fails if it names a module listed after its own, or a name lib.rs
//! neither lists nor re-exports; and the submodules of one module fail if
//! they import one another in a cycle, a name its parent re-exports from
//! one of them counting as that submodule's.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// A module's path from the crate root: `["driver", "mapped"]`.
type ModPath = Vec<String>;

#[test]
fn each_module_uses_only_the_layers_below_it_and_no_submodules_import_one_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = layer_list(&lib);
    let declared = declared_modules(&code_tokens(&lib));
    assert_eq!(
        layers.iter().collect::<BTreeSet<_>>(),
        declared.iter().collect::<BTreeSet<_>>(),
        "src/lib.rs: its layer list names each declared module once"
    );
    assert_eq!(layers.len(), declared.len(), "a module listed twice");
    let rank: BTreeMap<&str, usize> = (layers.iter().enumerate())
        .map(|(k, m)| (m.as_str(), k))
        .collect();

    let mut files = BTreeMap::new();
    collect(&src, &src, &mut files);
    let modules: BTreeSet<ModPath> = files.keys().cloned().collect();
    // What each module's own `use` declarations bring in, by the name they
    // bring it in as: a child's `super::Name` resolves through these.
    let imports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = (files.iter())
        .map(|(module, (_, toks))| {
            let named = (paths(toks).into_iter())
                .filter(|p| p.used)
                .filter_map(|p| Some((p.alias?, resolve(module, &p.segments, &modules)?)))
                .collect();
            (module.clone(), named)
        })
        .collect();

    let mut faults = Vec::new();
    let mut edges: BTreeMap<ModPath, BTreeSet<(String, String)>> = BTreeMap::new();
    for (module, (file, toks)) in &files {
        let Some(top) = module.first() else { continue };
        for path in paths(toks) {
            let Some(target) = resolve(module, &path.segments, &modules) else {
                continue;
            };
            let target = through_imports(target, &imports, &modules);
            let Some(first) = target.first() else {
                continue;
            };
            // A name lib.rs re-exports is its module's by now.
            let Some(&other_rank) = rank.get(first.as_str()) else {
                faults.push(format!(
                    "{file}: names `crate::{first}`, which src/lib.rs neither lists nor re-exports"
                ));
                continue;
            };
            if other_rank > rank[top.as_str()] {
                let other = first;
                faults.push(format!(
                    "{file}: `{top}` uses `{other}` ({}), which src/lib.rs lists after it",
                    target.join("::")
                ));
            }
            // Where the two paths part below the crate root, a submodule of
            // their common parent names another.
            let shared = module.iter().zip(&target).take_while(|(a, b)| a == b);
            let depth = shared.count();
            if depth >= 1 && depth < module.len() && depth < target.len() {
                let sibling = target[..=depth].to_vec();
                if modules.contains(&sibling) {
                    let edge = (module[depth].clone(), target[depth].clone());
                    edges
                        .entry(module[..depth].to_vec())
                        .or_default()
                        .insert(edge);
                }
            }
        }
    }
    for (parent, edges) in &edges {
        if let Some(cycle) = cycle(edges) {
            faults.push(format!(
                "submodules of `{}` import one another: {}",
                parent.join("::"),
                cycle.join(" -> ")
            ));
        }
    }
    assert!(faults.is_empty(), "\n{}", faults.join("\n"));
}

/// The modules src/lib.rs's documentation lists, in order: its lines
/// `//! - `name`: ...` (or `[`name`]`).
fn layer_list(lib: &str) -> Vec<String> {
    let listed = (lib.lines())
        .filter_map(|line| line.strip_prefix("//! - "))
        .filter_map(|item| {
            let item = item.strip_prefix('[').unwrap_or(item);
            let name = item.strip_prefix('`')?.split('`').next()?;
            Some(name.to_string())
        })
        .collect::<Vec<_>>();
    assert!(!listed.is_empty(), "src/lib.rs lists no layers");
    listed
}

/// The modules declared in `toks` as files of their own (`mod name;`).
fn declared_modules(toks: &[String]) -> Vec<String> {
    (toks.windows(3))
        .filter(|w| w[0] == "mod" && w[2] == ";")
        .map(|w| w[1].clone())
        .collect()
}

/// Each module of the crate under `dir` (lib.rs the root, src/bin left
/// out) with its file and its code's tokens.
fn collect(src: &Path, dir: &Path, files: &mut BTreeMap<ModPath, (String, Vec<String>)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(src).unwrap();
        if path.is_dir() {
            if rel != Path::new("bin") {
                collect(src, &path, files);
            }
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let mut module: ModPath = (rel.with_extension("").iter())
            .map(|s| s.to_str().unwrap().to_string())
            .collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        let text = fs::read_to_string(&path).unwrap();
        let file = format!("src/{}", rel.display());
        files.insert(module, (file, code_tokens(without_tests(&text))));
    }
}

/// `text` up to its test module: a `#[cfg(...test...)]` line at the left
/// margin followed by `mod tests`.
fn without_tests(text: &str) -> &str {
    let mut at = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let is_cfg = line.starts_with("#[cfg(") && line.contains("test");
        if is_cfg
            && lines
                .peek()
                .is_some_and(|next| next.starts_with("mod tests"))
        {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The tokens of Rust code: identifiers (and keywords), `::`, and single
/// punctuation characters; comments, string and character literals and
/// lifetimes left out.
fn code_tokens(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut toks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match (at(i), at(i + 1)) {
            ('/', '/') => {
                while i < c.len() && at(i) != '\n' {
                    i += 1;
                }
            }
            ('/', '*') => {
                let mut depth = 0;
                loop {
                    match (at(i), at(i + 1)) {
                        ('/', '*') => (depth, i) = (depth + 1, i + 2),
                        ('*', '/') => (depth, i) = (depth - 1, i + 2),
                        ('\0', _) => break,
                        _ => i += 1,
                    }
                    if depth == 0 {
                        break;
                    }
                }
            }
            ('"', _) => i = past_string(&c, i + 1),
            ('b', '"') => i = past_string(&c, i + 2),
            ('r', '"' | '#') | ('b', 'r') if raw_string(&c, i).is_some() => {
                i = raw_string(&c, i).unwrap();
            }
            ('\'', '\\') => {
                i += 3;
                while i < c.len() && at(i) != '\'' {
                    i += 1;
                }
                i += 1;
            }
            ('\'', _) if at(i + 2) == '\'' => i += 3,
            ('b', '\'') => i += 1,
            (':', ':') => {
                toks.push("::".to_string());
                i += 2;
            }
            (ch, _) if ident(ch) => {
                let start = i;
                while ident(at(i)) {
                    i += 1;
                }
                toks.push(c[start..i].iter().collect());
            }
            (ch, _) => {
                if !ch.is_whitespace() && ch != '\'' {
                    toks.push(ch.to_string());
                }
                i += 1;
            }
        }
    }
    toks
}

/// Where the string whose contents start at `i` ends.
fn past_string(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i] != '"' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// Where the raw string (`r"…"`, `r#"…"#`, `br…`) starting at `i` ends, if
/// one starts there.
fn raw_string(c: &[char], mut i: usize) -> Option<usize> {
    if c.get(i) == Some(&'b') {
        i += 1;
    }
    i += 1;
    let hashes = c[i..].iter().take_while(|&&ch| ch == '#').count();
    i += hashes;
    if c.get(i) != Some(&'"') {
        return None;
    }
    let closing: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    let end = (i + 1..c.len()).find(|&k| c[k..].starts_with(&closing))?;
    Some(end + closing.len())
}

/// A path a file names.
struct Named {
    segments: Vec<String>,
    /// The name a `use` brings it in as.
    alias: Option<String>,
    /// Whether a `use` declaration names it.
    used: bool,
}

/// The paths `toks` name: every `use` tree's, and every other path
/// starting with `crate`, `self` or `super`.
fn paths(toks: &[String]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let relative = matches!(toks[i].as_str(), "crate" | "self" | "super");
        let starts = relative && toks.get(i + 1).is_some_and(|t| t == "::");
        if toks[i] == "use" {
            i = tree(toks, i + 1, &[], true, &mut out);
        } else if starts && (i == 0 || toks[i - 1] != "::") {
            i = tree(toks, i, &[], false, &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads the path tree at `toks[i]` below `prefix` into `out`; returns
/// where it ends.
fn tree(
    toks: &[String],
    mut i: usize,
    prefix: &[String],
    used: bool,
    out: &mut Vec<Named>,
) -> usize {
    let tok = |i: usize| toks.get(i).map_or("", String::as_str);
    let mut segments = prefix.to_vec();
    loop {
        match tok(i) {
            "{" => {
                i += 1;
                while !matches!(tok(i), "}" | "") {
                    i = tree(toks, i, &segments, used, out);
                    if tok(i) == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push(Named {
                    segments,
                    alias: None,
                    used,
                });
                return i + 1;
            }
            name if name.starts_with(|ch: char| ch.is_alphabetic() || ch == '_') => {
                // `self` inside braces stands for the path before them.
                if !(name == "self" && !prefix.is_empty() && segments.len() == prefix.len()) {
                    segments.push(name.to_string());
                }
                i += 1;
                if tok(i) == "::" {
                    i += 1;
                    continue;
                }
                let alias = match tok(i) {
                    "as" => {
                        i += 2;
                        Some(tok(i - 1).to_string())
                    }
                    _ => segments.last().cloned(),
                };
                out.push(Named {
                    segments,
                    alias,
                    used,
                });
                return i;
            }
            _ => {
                if !segments.is_empty() {
                    out.push(Named {
                        segments,
                        alias: None,
                        used,
                    });
                }
                return i;
            }
        }
    }
}

/// `path`, named in `module`, from the crate root; `None` for a path
/// outside the crate (`std::…`, another crate's).
fn resolve(module: &ModPath, path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let (mut base, rest) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (module.clone(), &path[1..]),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            (
                module[..module.len().checked_sub(ups)?].to_vec(),
                &path[ups..],
            )
        }
        child => {
            let mut inside = module.clone();
            inside.push(child.to_string());
            if !modules.contains(&inside) {
                return None;
            }
            (module.clone(), path)
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// `path` with a name a module imports replaced by what it imports, down
/// the path, so that a name re-exported from a submodule counts as that
/// submodule's.
fn through_imports(
    mut path: ModPath,
    imports: &BTreeMap<ModPath, BTreeMap<String, ModPath>>,
    modules: &BTreeSet<ModPath>,
) -> ModPath {
    let (mut depth, mut hops) = (0, 0);
    while depth < path.len() {
        let (module, name) = (&path[..depth], &path[depth]);
        let mut inside = module.to_vec();
        inside.push(name.clone());
        if !modules.contains(&inside) {
            match imports.get(module).and_then(|named| named.get(name)) {
                Some(target) if *target != inside && hops < 16 => {
                    hops += 1;
                    let rest = path[depth + 1..].to_vec();
                    path = target.clone();
                    path.extend(rest);
                    depth = 0;
                    continue;
                }
                _ => return path,
            }
        }
        depth += 1;
    }
    path
}

/// A cycle among `edges` (`(a, b)`: `a` imports `b`), if there is one.
fn cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        edges: &'a BTreeSet<(String, String)>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|&n| n == node) {
            let mut cycle: Vec<String> = stack[at..].iter().map(|n| n.to_string()).collect();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        stack.push(node);
        for (_, next) in edges.iter().filter(|(from, _)| from == node) {
            if let Some(cycle) = visit(next, edges, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    (edges.iter()).find_map(|(from, _)| visit(from, edges, &mut Vec::new(), &mut done))
}
