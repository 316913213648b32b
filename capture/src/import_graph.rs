//! A check on how the capture's modules import each other: no two modules form a circle, and
//! the Oracle boundary (`source`) does not climb back to the modules that assemble the capture.
//!
//! Two modules that import each other are one concept in two files: neither can be read,
//! tested or moved without the other. The check works at every level of the tree: among the
//! children of each module (the top-level modules of the crate, the files of `redo/`, ...), an
//! import from anywhere under one child to anywhere under another is an edge, and no two
//! children may have an edge each way, nor may longer circles (a → b → c → a) form, the
//! top-level modules included. Imports between a module and its own descendants or ancestors (a
//! `mod.rs` and its files) are how a module is built and are not edges.
//!
//! It reads the source text rather than the compiler's resolution: comments and literals are
//! blanked, then `use` trees and inline `crate::`/`super::` paths are resolved against the files
//! present. A path is taken to name the deepest module it reaches, so an item re-exported by a
//! parent (`pub use`) counts as the parent's: the edge is then seen only at the parent's level.
//! The crate root is the exception: what `lib.rs` re-exports counts as the module it comes from,
//! so `crate::Stop` is an import of `stop` (and `source` could not reach the capture's top through
//! a re-export). Test code counts too: a test that imports a module above its own is the same circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules that assemble the whole capture from the rest: `source` must not import them.
const CAPTURE_TOP: &[&str] = &["error", "run", "engine", "cli", "doctor", "exit", "http"];

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

/// The crate's modules, and the items its root re-exports (`pub use stop::Stop` in `lib.rs`)
/// with the module each comes from.
#[derive(Default)]
struct Tree {
    modules: BTreeSet<ModulePath>,
    reexports: BTreeMap<String, ModulePath>,
}

impl Tree {
    /// The modules of `files`, and the root's re-exports as `lib.rs` in `src` declares them.
    fn of(src: &Path, files: &BTreeMap<PathBuf, ModulePath>) -> Self {
        let mut tree = Self {
            modules: files.values().cloned().collect(),
            reexports: BTreeMap::new(),
        };
        let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
        let code = code_only(&lib);
        let mut reexports = BTreeMap::new();
        for (at, _) in code.match_indices("pub use ") {
            let end = code[at..].find(';').map_or(code.len(), |end| at + end);
            for path in expand_use(&code[at + "pub use ".len()..end]) {
                let mut path = path;
                if path.first().is_some_and(|first| first != "crate") {
                    path.insert(0, "crate".to_owned());
                }
                if let (Some(item), Some(module)) = (path.last(), resolve(&path, &[], &tree)) {
                    reexports.insert(item.clone(), module);
                }
            }
        }
        tree.reexports = reexports;
        tree
    }
}

/// The deepest module a path names, or `None` when it does not start at `crate`, `super` or
/// `self` (an external crate, or a name in scope). `here` is the module the path is written in.
/// An item the crate root re-exports names the module it comes from: `crate::Stop` is an import
/// of `stop`.
fn resolve(segments: &[String], here: &[String], tree: &Tree) -> Option<ModulePath> {
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
        if !tree.modules.contains(&deeper) {
            if base.is_empty()
                && let Some(module) = tree.reexports.get(segment)
            {
                return Some(module.clone());
            }
            break;
        }
        base = deeper;
    }
    Some(base)
}

/// Every import of one file. Inline modules (`mod tests { .. }`) shift what `super` and `self`
/// mean inside them; the import still counts as the file's.
fn imports_of(file: &Path, module: &[String], tree: &Tree) -> Vec<Import> {
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
    let import = |to: ModulePath, at: usize| Import {
        from: module.to_vec(),
        to,
        file: file.to_owned(),
        line: line_of(at),
    };
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
                imports.extend(resolve(&path, &here(), tree).map(|to| import(to, at)));
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
            imports.extend(resolve(&path, &here(), tree).map(|to| import(to, at)));
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
    let tree = Tree::of(src, &files);
    files
        .iter()
        .flat_map(|(file, module)| {
            let mut imports = imports_of(file, module, &tree);
            for import in &mut imports {
                import.file = file.strip_prefix(src).unwrap_or(file).to_owned();
            }
            imports
        })
        .collect()
}

/// An edge between two siblings: (their parent, from child, to child).
type Edge = (ModulePath, String, String);

/// The edges between siblings: for each import, the two children of the deepest common parent
/// that hold its two ends, with the first import seen for it.
fn sibling_edges(imports: &[Import]) -> BTreeMap<Edge, &Import> {
    let mut edges: BTreeMap<Edge, &Import> = BTreeMap::new();
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
    edges
}

/// Where an import is written, `file:line`.
fn at(import: &Import) -> String {
    format!("{}:{}", import.file.display(), import.line)
}

/// A parent module as `crate::a::b`.
fn parent_name(parent: &[String]) -> String {
    let tail: String = parent.iter().map(|p| format!("::{p}")).collect();
    format!("crate{tail}")
}

/// The pairs of siblings that import each other: an edge whose reverse is an edge too.
fn circles(imports: &[Import]) -> Vec<Circle> {
    let edges = sibling_edges(imports);
    edges
        .iter()
        .filter(|((_, from, to), _)| from < to)
        .filter_map(|((parent, from, to), there)| {
            let back = edges.get(&(parent.clone(), to.clone(), from.clone()))?;
            Some(Circle {
                pair: format!("{}::{from} ↔ {to}", parent_name(parent)),
                imports: format!("{} and {}", at(there), at(back)),
            })
        })
        .collect()
}

/// Circles of three or more siblings under any parent module (the crate root's top-level
/// modules, the modules one level below each of them, and deeper), found by a depth-first search
/// from each child in name order: each edge back to a child on the search's path closes the
/// circle of the path from there. Each is named as `parent: a → b → c → a`, starting at its
/// least module, with one import for each step. Pairs are [`circles`]' to report. The search
/// does not list every circle, but siblings with any circle and no pair give it at least one
/// edge back, so it finds one whenever there is one.
fn longer_circles(imports: &[Import]) -> Vec<Circle> {
    /// The search below `node`, with `path` the children it went through to reach it.
    fn search<'e>(
        node: &'e str,
        next: &BTreeMap<&'e str, Vec<&'e str>>,
        path: &mut Vec<&'e str>,
        done: &mut BTreeSet<&'e str>,
        found: &mut BTreeSet<Vec<&'e str>>,
    ) {
        path.push(node);
        for &to in next.get(node).into_iter().flatten() {
            if let Some(start) = path.iter().position(|on| *on == to) {
                let mut circle = path[start..].to_vec();
                if circle.len() > 2 {
                    let least = (0..circle.len())
                        .min_by_key(|&i| circle[i])
                        .unwrap_or_default();
                    circle.rotate_left(least);
                    found.insert(circle);
                }
            } else if !done.contains(to) {
                search(to, next, path, done, found);
            }
        }
        path.pop();
        done.insert(node);
    }
    let edges = sibling_edges(imports);
    let mut by_parent: BTreeMap<&ModulePath, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for (parent, from, to) in edges.keys() {
        by_parent
            .entry(parent)
            .or_default()
            .entry(from)
            .or_default()
            .push(to);
    }
    let mut out = Vec::new();
    for (parent, next) in &by_parent {
        let mut found = BTreeSet::new();
        let mut done = BTreeSet::new();
        for &node in next.keys() {
            if !done.contains(node) {
                search(node, next, &mut Vec::new(), &mut done, &mut found);
            }
        }
        for circle in found {
            let steps: Vec<String> = (0..circle.len())
                .map(|i| {
                    let (from, to) = (circle[i], circle[(i + 1) % circle.len()]);
                    edges
                        .get(&((*parent).clone(), from.to_owned(), to.to_owned()))
                        .map_or_else(String::new, |import| at(import))
                })
                .collect();
            out.push(Circle {
                pair: format!(
                    "{}: {} → {}",
                    parent_name(parent),
                    circle.join(" → "),
                    circle[0]
                ),
                imports: steps.join(", "),
            });
        }
    }
    out
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
    let found: Vec<String> = circles(&crate_imports(&src_dir()))
        .iter()
        .map(|circle| format!("{} import each other: {}", circle.pair, circle.imports))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_three_or_more_sibling_modules_import_each_other_in_a_circle() {
    let found: Vec<String> = longer_circles(&crate_imports(&src_dir()))
        .iter()
        .map(|circle| format!("{} import each other: {}", circle.pair, circle.imports))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
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
    let tree = Tree {
        modules: [
            vec![],
            vec!["a".to_owned()],
            vec!["a".to_owned(), "b".to_owned()],
            vec!["a".to_owned(), "c".to_owned()],
            vec!["d".to_owned()],
        ]
        .into_iter()
        .collect(),
        // As `pub use d::Reexported;` in lib.rs.
        reexports: [("Reexported".to_owned(), vec!["d".to_owned()])]
            .into_iter()
            .collect(),
    };
    let here = vec!["a".to_owned(), "b".to_owned()];
    let resolved: Vec<_> = expand_use(
        "{super::{c::Item, b::{self, Other}}, crate::d::f as g, crate::Reexported, crate::Own}",
    )
    .iter()
    .filter_map(|path| resolve(path, &here, &tree))
    .collect();
    assert_eq!(
        resolved,
        vec![
            vec!["a".to_owned(), "c".to_owned()],
            vec!["a".to_owned(), "b".to_owned()],
            vec!["a".to_owned(), "b".to_owned()],
            vec!["d".to_owned()],
            vec!["d".to_owned()],
            vec![],
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

#[test]
fn a_longer_circle_is_found_by_the_search_and_named_from_its_least_module() {
    let import = |from: &[&str], to: &[&str], line: usize| Import {
        from: from.iter().map(|s| (*s).to_owned()).collect(),
        to: to.iter().map(|s| (*s).to_owned()).collect(),
        file: PathBuf::from("f.rs"),
        line,
    };
    let found = longer_circles(&[
        // p::c → p::a → p::b::x → p::c: a circle of three under p.
        import(&["p", "c"], &["p", "a"], 1),
        import(&["p", "a"], &["p", "b", "x"], 2),
        import(&["p", "b", "x"], &["p", "c"], 3),
        // A chain that closes nothing, and a circle of three among top-level modules.
        import(&["p", "a"], &["p", "d"], 4),
        import(&["b"], &["c"], 5),
        import(&["c", "y"], &["a"], 6),
        import(&["a"], &["b"], 7),
    ]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].pair, "crate: a → b → c → a");
    assert_eq!(found[0].imports, "f.rs:7, f.rs:5, f.rs:6");
    assert_eq!(found[1].pair, "crate::p: a → b → c → a");
    assert_eq!(found[1].imports, "f.rs:2, f.rs:3, f.rs:1");
}
