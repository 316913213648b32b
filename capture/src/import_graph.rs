//! A check on how the capture's modules import each other: no two modules form a circle, and
//! the Oracle boundary (`source`) does not climb back to the modules that assemble the capture.
//!
//! Two modules that import each other are one concept in two files: neither can be read,
//! tested or moved without the other. The check works at every level of the tree: among the
//! children of each module (the top-level modules of the crate, the files of `redo/`, ...), an
//! import from anywhere under one child to anywhere under another is an edge, and no two
//! children may have an edge each way ([`KNOWN_CIRCLES`] lists those still left). Longer circles
//! (a → b → c → a) are not refused yet: the top-level modules still form one through the error,
//! the doctor and the sink's bookmark. Imports between a module and its own descendants or ancestors (a `mod.rs` and its
//! files) are how a module is built and are not edges.
//!
//! It reads the source text rather than the compiler's resolution: comments and literals are
//! blanked, then `use` trees and inline `crate::`/`super::` paths are resolved against the files
//! present. A path is taken to name the deepest module it reaches, so an item re-exported by a
//! parent (`pub use`) counts as the parent's: the edge is then seen only at the parent's level.
//! Test code counts too: a test that imports a module above its own is the same circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules that assemble the whole capture from the rest: `source` must not import them.
const CAPTURE_TOP: &[&str] = &["error", "run", "engine", "cli", "doctor", "exit", "http"];

/// Pairs that still import each other, as `parent::a ↔ b` (a before b): the check fails on any
/// pair not listed, and on a listed pair that no longer imports each other, so the list only
/// shrinks. Each is waiting for its own change:
const KNOWN_CIRCLES: &[&str] = &[
    // The simulator's SQL evaluator and its compiled expressions call each other (an
    // expression is compiled against the evaluator's scope, and evaluated by it).
    "crate::simulator::sql::compiled ↔ engine",
    // The authentication tests read the whole client settings (kafka::config), which are
    // built from the authentication properties.
    "crate::sink::kafka::authentication ↔ config",
];

type ModulePath = Vec<String>;

/// One import: from the module of a file to the deepest module the path names.
#[derive(Debug)]
struct Import {
    from: ModulePath,
    to: ModulePath,
    file: PathBuf,
    line: usize,
}

/// The module path of each `.rs` file under `src` (`a/b/mod.rs` and `a/b.rs` are `a::b`;
/// `lib.rs` is the crate root). `main.rs` is a separate crate and is left out.
fn module_files(src: &Path) -> BTreeMap<PathBuf, ModulePath> {
    fn walk(dir: &Path, prefix: &[String], files: &mut BTreeMap<PathBuf, ModulePath>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
            .map(|entry| entry.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .expect("UTF-8 file name")
                .to_owned();
            if path.is_dir() {
                let mut inner = prefix.to_vec();
                inner.push(name);
                walk(&path, &inner, files);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut module = prefix.to_vec();
                match stem {
                    "mod" | "lib" => {}
                    "main" if prefix.is_empty() => continue,
                    _ => module.push(stem.to_owned()),
                }
                files.insert(path, module);
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(src, &[], &mut files);
    files
}

/// The text with comments, string and char literals blanked (newlines kept, so line numbers
/// hold).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars[..i]
                .last()
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            out.extend(chars[i..j].iter().map(|c| blank(*c)));
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                out.extend(
                    chars[i..(i + step).min(chars.len())]
                        .iter()
                        .map(|c| blank(*c)),
                );
                i += step;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), or else a lifetime, left as it is.
            let end = if next == Some('\\') {
                (i + 3..chars.len()).find(|&k| chars[k] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The flat paths of a `use` tree (`a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`), each
/// as its segments (`self` in a group names the group's own path).
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|segment| !segment.is_empty())
                .map(str::to_owned)
                .collect();
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut base = prefix.to_vec();
            base.extend(head);
            let mut depth = 0;
            let mut start = 0;
            for (at, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&inner[start..at], &base, out);
                        start = at + 1;
                    }
                    _ => {}
                }
            }
            expand(&inner[start..], &base, out);
        } else {
            let path = tree.split(" as ").next().unwrap_or(tree);
            let mut segments = prefix.to_vec();
            segments.extend(
                path.split("::")
                    .map(str::trim)
                    .filter(|segment| !segment.is_empty() && *segment != "self")
                    .map(str::to_owned),
            );
            out.push(segments);
        }
    }
    let mut out = Vec::new();
    expand(tree, &[], &mut out);
    out
}

/// The deepest module a path names, or `None` when it does not start at `crate`, `super` or
/// `self` (an external crate, or a name in scope). `here` is the module the path is written in.
fn resolve(
    segments: &[String],
    here: &[String],
    modules: &BTreeSet<ModulePath>,
) -> Option<ModulePath> {
    let mut rest = segments.iter().map(String::as_str).peekable();
    let mut base: ModulePath = match *rest.peek()? {
        "crate" => Vec::new(),
        "self" | "super" => here.to_vec(),
        _ => return None,
    };
    if rest.next() == Some("super") {
        base.pop();
    }
    while rest.peek() == Some(&"super") {
        rest.next();
        base.pop();
    }
    for segment in rest {
        let mut deeper = base.clone();
        deeper.push(segment.to_owned());
        if !modules.contains(&deeper) {
            break;
        }
        base = deeper;
    }
    Some(base)
}

/// Every import of one file. Inline modules (`mod tests { .. }`) shift what `super` and `self`
/// mean inside them; the import still counts as the file's.
fn imports_of(file: &Path, module: &[String], modules: &BTreeSet<ModulePath>) -> Vec<Import> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|error| panic!("reading {}: {error}", file.display()));
    let code = code_only(&text);
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let word_at = |at: usize, word: &str| {
        code[at..].starts_with(word)
            && (at == 0 || !is_ident(bytes[at - 1]))
            && bytes.get(at + word.len()).is_none_or(|b| !is_ident(*b))
    };
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut imports = Vec::new();
    // Inline modules open here: their names, and the brace depth at which each closes.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        let here = || {
            let mut here = module.to_vec();
            here.extend(inline.iter().map(|(name, _)| name.clone()));
            here
        };
        match bytes[at] {
            b'{' => {
                depth += 1;
                at += 1;
                continue;
            }
            b'}' => {
                if inline.last().is_some_and(|(_, closes)| *closes == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                at += 1;
                continue;
            }
            _ => {}
        }
        if word_at(at, "mod") {
            let rest = &code[at + 3..];
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            if !name.is_empty() && after.starts_with('{') {
                inline.push((name, depth + 1));
            }
            at += 3;
        } else if word_at(at, "use") {
            let end = code[at..].find(';').map_or(bytes.len(), |end| at + end);
            for path in expand_use(&code[at + 3..end]) {
                if let Some(to) = resolve(&path, &here(), modules) {
                    imports.push(Import {
                        from: module.to_vec(),
                        to,
                        file: file.to_owned(),
                        line: line_of(at),
                    });
                }
            }
            at = end;
        } else if (word_at(at, "crate") || word_at(at, "super"))
            && code[at..]
                .split_once("::")
                .is_some_and(|(head, _)| head.len() == 5 && !code[..at].trim_end().ends_with("in"))
        {
            let end = code[at..]
                .char_indices()
                .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == ':'))
                .map_or(bytes.len(), |(end, _)| at + end);
            let path: Vec<String> = code[at..end]
                .split("::")
                .filter(|segment| !segment.is_empty())
                .map(str::to_owned)
                .collect();
            if let Some(to) = resolve(&path, &here(), modules) {
                imports.push(Import {
                    from: module.to_vec(),
                    to,
                    file: file.to_owned(),
                    line: line_of(at),
                });
            }
            at = end;
        } else {
            at += 1;
        }
    }
    imports
}

/// Every import of the crate's files.
fn crate_imports(src: &Path) -> Vec<Import> {
    let files = module_files(src);
    let modules: BTreeSet<ModulePath> = files.values().cloned().collect();
    files
        .iter()
        .flat_map(|(file, module)| {
            let mut imports = imports_of(file, module, &modules);
            for import in &mut imports {
                import.file = file.strip_prefix(src).unwrap_or(file).to_owned();
            }
            imports
        })
        .collect()
}

/// The pairs of siblings that import each other: for each import, the two children of the
/// deepest common parent that hold its two ends are an edge, and an edge whose reverse is an
/// edge too is a circle.
fn circles(imports: &[Import]) -> Vec<Circle> {
    // (parent, from child, to child) → the first import seen for that edge.
    let mut edges: BTreeMap<(ModulePath, String, String), &Import> = BTreeMap::new();
    for import in imports {
        let common = import
            .from
            .iter()
            .zip(&import.to)
            .take_while(|(a, b)| a == b)
            .count();
        let (Some(from), Some(to)) = (import.from.get(common), import.to.get(common)) else {
            continue; // one end is the other's ancestor
        };
        edges
            .entry((import.from[..common].to_vec(), from.clone(), to.clone()))
            .or_insert(import);
    }
    let at = |import: &Import| format!("{}:{}", import.file.display(), import.line);
    edges
        .iter()
        .filter(|((_, from, to), _)| from < to)
        .filter_map(|((parent, from, to), there)| {
            let back = edges.get(&(parent.clone(), to.clone(), from.clone()))?;
            let parent: String = parent.iter().map(|p| format!("::{p}")).collect();
            Some(Circle {
                pair: format!("crate{parent}::{from} ↔ {to}"),
                imports: format!("{} and {}", at(there), at(back)),
            })
        })
        .collect()
}

/// Two sibling modules that import each other, and one import each way.
#[derive(Debug)]
struct Circle {
    pair: String,
    imports: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_two_modules_import_each_other_in_a_circle() {
    let found = circles(&crate_imports(&src_dir()));
    let new: Vec<String> = found
        .iter()
        .filter(|circle| !KNOWN_CIRCLES.contains(&circle.pair.as_str()))
        .map(|circle| format!("{} import each other: {}", circle.pair, circle.imports))
        .collect();
    assert!(new.is_empty(), "{}", new.join("\n"));
    let gone: Vec<&str> = KNOWN_CIRCLES
        .iter()
        .copied()
        .filter(|known| !found.iter().any(|circle| circle.pair == *known))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer a circle, take it off KNOWN_CIRCLES: {gone:?}"
    );
}

#[test]
fn the_source_does_not_import_the_modules_that_assemble_the_capture() {
    let climbs: Vec<String> = crate_imports(&src_dir())
        .iter()
        .filter(|import| import.from.first().is_some_and(|top| top == "source"))
        .filter(|import| {
            import
                .to
                .first()
                .is_some_and(|top| CAPTURE_TOP.contains(&top.as_str()))
        })
        .map(|import| {
            format!(
                "{}:{} imports crate::{}",
                import.file.display(),
                import.line,
                import.to.join("::")
            )
        })
        .collect();
    assert!(climbs.is_empty(), "{}", climbs.join("\n"));
}

#[test]
fn the_check_sees_grouped_relative_and_inline_paths() {
    let modules: BTreeSet<ModulePath> = [
        vec![],
        vec!["a".to_owned()],
        vec!["a".to_owned(), "b".to_owned()],
        vec!["a".to_owned(), "c".to_owned()],
        vec!["d".to_owned()],
    ]
    .into_iter()
    .collect();
    let here = vec!["a".to_owned(), "b".to_owned()];
    let resolved: Vec<_> = expand_use("{super::{c::Item, b::{self, Other}}, crate::d::f as g}")
        .iter()
        .filter_map(|path| resolve(path, &here, &modules))
        .collect();
    assert_eq!(
        resolved,
        vec![
            vec!["a".to_owned(), "c".to_owned()],
            vec!["a".to_owned(), "b".to_owned()],
            vec!["a".to_owned(), "b".to_owned()],
            vec!["d".to_owned()],
        ]
    );
    let code = code_only("let s = \"crate::x\"; // crate::y\nlet c = '\"'; crate::z::w");
    assert!(!code.contains("crate::x") && !code.contains("crate::y"));
    assert!(code.contains("crate::z::w"));
}

#[test]
fn a_circle_is_reported_with_the_imports_that_make_it() {
    let import = |from: &[&str], to: &[&str]| Import {
        from: from.iter().map(|s| (*s).to_owned()).collect(),
        to: to.iter().map(|s| (*s).to_owned()).collect(),
        file: PathBuf::from("f.rs"),
        line: 1,
    };
    let found = circles(&[
        import(&["a", "x"], &["b"]),
        import(&["b"], &["a"]),
        import(&["a"], &["a", "x"]),
        import(&["c"], &["a"]),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pair, "crate::a ↔ b");
    assert_eq!(found[0].imports, "f.rs:1 and f.rs:1");
}
