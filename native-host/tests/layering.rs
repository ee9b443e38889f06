//! The host's layering, checked rather than stated (in the spirit of ripgrep's crates, where an
//! arrow cannot point back because each layer is its own crate). Every file of `src/` is parsed
//! with `syn` from `lib.rs` down its `mod` declarations, every path that names an item of this
//! crate (`use` trees, `crate::`/`super::`/`self::` paths in code, types, macros and attribute
//! strings such as serde's `with = "crate::…"`) is resolved to the file that defines the item
//! (following re-exports), and the test fails on
//! - a folder that uses one above it in [`ORDER`] (a back-arrow),
//! - a cycle between files (A uses an item of B and B, perhaps through others, one of A),
//! - `use super::*` outside test code (a file's imports then live in another file),
//! - `clap` outside `src/cli/`.
//!
//! A macro of this crate (`macro_rules!`) is resolved to the file that defines it, and what its
//! body names (`$crate::…`) counts as named by every file that invokes it, where the code lands:
//! an exported macro in `lib.rs` expanding to `$crate::trace::…`, invoked from `os/`, is the
//! back-arrow `os -> trace` ([`a_macro_is_resolved_to_its_file_and_its_body_to_the_caller`]).
//!
//! Test code (`#[cfg(test)]` items and the files they include) is left out of the first three:
//! tests may look at any layer, and `use super::*` is their idiom.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The layers from the ground floor up: a top-level module may use only those before it. The
/// same list is in `lib.rs`'s doc (after [`ORDER_MARKER`]); [`lib_doc_states_the_same_order`]
/// keeps the two equal.
const ORDER: &[&str] = &[
    "error",
    "path_text",
    "units",
    "note",
    "invocation",
    "framing",
    "os",
    "tracer",
    "state",
    "pagecache",
    "firefox",
    "trace",
    "learn",
    "export",
    "launch",
    "relaunch",
    "host",
    "cli",
];

/// The sentence of `lib.rs`'s doc that lists the order, as backticked names, ending with a period.
const ORDER_MARKER: &str = "The layers, from the ground floor up:";

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// One source file of the crate, parsed.
struct SourceFile {
    /// Relative to `src/`, with `/`: `pagecache/sys.rs`.
    rel: String,
    /// The module it defines: `["pagecache", "sys"]`; empty for `lib.rs`.
    module: Vec<String>,
    /// Included only under `#[cfg(test)]`.
    test: bool,
    ast: syn::File,
}

struct Crate {
    files: Vec<SourceFile>,
    /// Every non-test `macro_rules!` of the crate, by name: the file that defines it and its
    /// body (several where two files define one of the same name).
    macros: BTreeMap<String, Vec<(usize, TokenStream)>>,
    /// Every module path (files and inline non-test modules) to the file that holds it.
    modules: BTreeMap<Vec<String>, usize>,
    /// Per file: each name a non-test `use` brings in, to the absolute path it names.
    aliases: Vec<BTreeMap<String, Vec<String>>>,
}

/// `#[cfg(test)]` or `#[test]`: code that only the test build has.
fn has_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn load() -> Crate {
    load_from(&src_dir())
}

/// The crate whose `lib.rs` is in `src`.
fn load_from(src: &Path) -> Crate {
    let mut krate = Crate {
        files: Vec::new(),
        macros: BTreeMap::new(),
        modules: BTreeMap::new(),
        aliases: Vec::new(),
    };
    load_file(&mut krate, src, "lib.rs".into(), Vec::new(), false);
    for i in 0..krate.files.len() {
        if !krate.files[i].test {
            let items = krate.files[i].ast.items.clone();
            collect_macros(&mut krate.macros, &items, i);
        }
    }
    for i in 0..krate.files.len() {
        let aliases = collect_aliases(&krate, i);
        krate.aliases.push(aliases);
    }
    krate
}

fn load_file(krate: &mut Crate, src: &Path, rel: String, module: Vec<String>, test: bool) {
    let text = fs::read_to_string(src.join(&rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("parse {rel}: {e}"));
    let index = krate.files.len();
    krate.modules.insert(module.clone(), index);
    // Where `mod x;` looks for x: beside lib.rs/mod.rs, or in a folder named after this file.
    let dir = {
        let p = Path::new(&rel);
        let parent = p.parent().unwrap_or(Path::new("")).to_path_buf();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        if rel == "lib.rs" || stem == "mod" {
            parent
        } else {
            parent.join(stem)
        }
    };
    let file_dir = Path::new(&rel)
        .parent()
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let mut children = Vec::new();
    collect_mods(&ast.items, &module, test, &mut |m, name, child_test| {
        children.push((m.to_vec(), name, child_test))
    });
    krate.files.push(SourceFile {
        rel,
        module: module.clone(),
        test,
        ast,
    });
    // Inline modules belong to this file.
    let items = krate.files[index].ast.items.clone();
    register_inline(krate, &items, &module, index);
    for (parent, (name, path), child_test) in children {
        let child_rel = match path {
            Some(p) => file_dir.join(p),
            None if parent.len() == module.len() => {
                let flat = dir.join(format!("{name}.rs"));
                if src.join(&flat).exists() {
                    flat
                } else {
                    dir.join(&name).join("mod.rs")
                }
            }
            None => panic!("file modules inside inline modules are not handled ({name})"),
        };
        let mut child_module = parent.clone();
        child_module.push(name);
        let rel = child_rel.to_string_lossy().replace('\\', "/");
        load_file(krate, src, rel, child_module, child_test);
    }
}

type ModDecl = (String, Option<String>);

fn collect_mods(
    items: &[syn::Item],
    module: &[String],
    test: bool,
    found: &mut dyn FnMut(&[String], ModDecl, bool),
) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let t = test || has_cfg_test(&m.attrs);
            let name = m.ident.to_string();
            match &m.content {
                None => found(module, (name, path_attr(&m.attrs)), t),
                Some((_, inner)) => {
                    let mut inner_module = module.to_vec();
                    inner_module.push(name);
                    collect_mods(inner, &inner_module, t, found);
                }
            }
        }
    }
}

/// Every non-test `macro_rules!` among `items` (inline modules included) of file `index`.
fn collect_macros(
    macros: &mut BTreeMap<String, Vec<(usize, TokenStream)>>,
    items: &[syn::Item],
    index: usize,
) {
    for item in items {
        match item {
            syn::Item::Macro(m)
                if m.mac.path.is_ident("macro_rules") && !has_cfg_test(&m.attrs) =>
            {
                if let Some(name) = &m.ident {
                    macros
                        .entry(name.to_string())
                        .or_default()
                        .push((index, m.mac.tokens.clone()));
                }
            }
            syn::Item::Mod(m) if !has_cfg_test(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    collect_macros(macros, inner, index);
                }
            }
            _ => {}
        }
    }
}

fn register_inline(krate: &mut Crate, items: &[syn::Item], module: &[String], index: usize) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            if let (Some((_, inner)), false) = (&m.content, has_cfg_test(&m.attrs)) {
                let mut inner_module = module.to_vec();
                inner_module.push(m.ident.to_string());
                krate.modules.insert(inner_module.clone(), index);
                register_inline(krate, inner, &inner_module, index);
            }
        }
    }
}

/// A `use` tree flattened into (path, the name it binds or None for a glob).
fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                let bound = prefix.last().cloned();
                out.push((prefix.clone(), bound));
            } else {
                let mut p = prefix.clone();
                p.push(name.clone());
                out.push((p, Some(name)));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            let name = r.ident.to_string();
            if name != "self" {
                p.push(name);
            }
            out.push((p, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, out);
            }
        }
    }
}

/// Every non-test `use` of a file, with the module it sits in.
fn file_uses(krate: &Crate, index: usize) -> Vec<(Vec<String>, syn::ItemUse)> {
    UseVisitor::walk(krate, index, Some(Vec::new()))
        .collect
        .unwrap_or_default()
}

fn collect_aliases(krate: &Crate, index: usize) -> BTreeMap<String, Vec<String>> {
    let mut aliases = BTreeMap::new();
    for (module, u) in file_uses(krate, index) {
        let mut flat = Vec::new();
        flatten_use(&u.tree, &mut Vec::new(), &mut flat);
        for (path, name) in flat {
            let (Some(name), Some(abs)) = (name, absolute(krate, &module, &path, None)) else {
                continue;
            };
            aliases.insert(name, abs);
        }
    }
    aliases
}

/// The absolute path (from the crate root) that `path`, written in `module`, names; None when
/// it names something outside the crate or a local item.
fn absolute(
    krate: &Crate,
    module: &[String],
    path: &[String],
    aliases: Option<&BTreeMap<String, Vec<String>>>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "super" | "self" => {
            let mut base = module.to_vec();
            let mut rest = path;
            while let Some(seg) = rest.first() {
                match seg.as_str() {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            Some(base)
        }
        _ => {
            let mut child = module.to_vec();
            child.push(first.clone());
            if krate.modules.contains_key(&child) {
                child.extend(path[1..].iter().cloned());
                return Some(child);
            }
            let target = aliases?.get(first)?;
            let mut abs = target.clone();
            abs.extend(path[1..].iter().cloned());
            Some(abs)
        }
    }
}

/// The file that defines what `abs` names, following re-exports (`pub use`, or a parent's
/// import a child reaches through `super::`); None when `abs` is a module itself.
fn defining_file(krate: &Crate, abs: &[String], depth: usize) -> Option<usize> {
    let (len, &file) = (0..=abs.len())
        .rev()
        .find_map(|n| krate.modules.get(&abs[..n]).map(|f| (n, f)))?;
    if len == abs.len() {
        // The path names a module itself (`use crate::trace::store;`): its own file is used.
        return Some(file);
    }
    // `abs[len]` is an item of that file, or a name it imports (a re-export, or a parent's
    // import a child reaches through `super::`): then the file that defines it is used.
    if depth < 16 {
        if let Some(target) = krate.aliases[file].get(&abs[len]) {
            if target.as_slice() != abs {
                let mut followed = target.clone();
                followed.extend(abs[len + 1..].iter().cloned());
                if let Some(f) = defining_file(krate, &followed, depth + 1) {
                    return Some(f);
                }
            }
        }
    }
    Some(file)
}

/// What one file uses: the files whose items it names, and the modules it glob-imports through
/// `super::`.
#[derive(Default)]
struct Uses {
    files: BTreeSet<usize>,
    /// Every crate path it names, made absolute (for the count of root's lines).
    named: BTreeSet<Vec<String>>,
    /// The files of the modules it imports with `use super::*` (or `super::super::*`).
    super_globs: Vec<usize>,
}

/// Walks a file's non-test code, keeping track of the module it is in: resolves what each path
/// names into [`Uses`], or (with `collect`, before the aliases are known) only gathers the
/// file's `use` items.
struct UseVisitor<'a> {
    krate: &'a Crate,
    index: usize,
    module: Vec<String>,
    uses: Uses,
    collect: Option<Vec<(Vec<String>, syn::ItemUse)>>,
    /// The crate's macros being expanded here (a macro that invokes itself is walked once).
    expanding: Vec<String>,
}

impl<'a> UseVisitor<'a> {
    /// The visitor after walking file `index` (nothing for a test file).
    fn walk(
        krate: &'a Crate,
        index: usize,
        collect: Option<Vec<(Vec<String>, syn::ItemUse)>>,
    ) -> Self {
        let file = &krate.files[index];
        let mut v = UseVisitor {
            krate,
            index,
            module: file.module.clone(),
            uses: Uses::default(),
            collect,
            expanding: Vec::new(),
        };
        if !file.test {
            v.visit_file(&file.ast);
        }
        v
    }

    fn path(&mut self, segs: &[String]) {
        if self.collect.is_some() {
            return;
        }
        let aliases = &self.krate.aliases[self.index];
        let abs = absolute(self.krate, &self.module, segs, Some(aliases)).or_else(|| {
            // A bare name of an item of this very module (a sibling function).
            (segs.len() == 1 && item_named(&self.krate.files[self.index].ast.items, &segs[0]))
                .then(|| [self.module.clone(), segs.to_vec()].concat())
        });
        let Some(abs) = abs else {
            return;
        };
        self.uses.named.insert(abs.clone());
        if let Some(file) = defining_file(self.krate, &abs, 0) {
            self.uses.files.insert(file);
        }
    }

    /// An invocation `segs!(…)`: where it names a macro of this crate (by its bare name, as
    /// `crate::name!`/`$crate::name!`, or through a module or `use` of the crate), the file that
    /// defines it is used, and so is everything its body names with `$crate::`/`crate::` (the
    /// code lands here). A name of another crate's macro (`format!`, `serde::…`) is not ours.
    fn macro_call(&mut self, segs: &[String]) {
        if self.collect.is_some() {
            return;
        }
        let Some(name) = segs.last() else { return };
        let ours = segs.len() == 1
            || matches!(segs[0].as_str(), "crate" | "$crate" | "self" | "super")
            || absolute(
                self.krate,
                &self.module,
                &segs[..1],
                Some(&self.krate.aliases[self.index]),
            )
            .is_some();
        let Some(defs) = self.krate.macros.get(name).filter(|_| ours) else {
            return;
        };
        if self.expanding.contains(name) {
            return;
        }
        // One definition in this very file (a local macro): that one; else every one so named.
        let here: Vec<&(usize, TokenStream)> =
            defs.iter().filter(|(f, _)| *f == self.index).collect();
        let picked: Vec<(usize, TokenStream)> = if here.is_empty() {
            defs.clone()
        } else {
            here.into_iter().cloned().collect()
        };
        self.expanding.push(name.clone());
        for (file, body) in picked {
            self.uses.files.insert(file);
            self.tokens_where(body, true);
        }
        self.expanding.pop();
    }

    /// Paths inside macro bodies and attributes, which syn keeps as tokens: every run of
    /// `ident :: ident …`, and every string literal that parses as a path of this crate.
    fn tokens(&mut self, tokens: TokenStream) {
        self.tokens_where(tokens, false);
    }

    /// [`Self::tokens`]; with `only_crate`, only `crate::` paths count (a `macro_rules!` body,
    /// whose `super::` and bare names mean something only where it expands).
    fn tokens_where(&mut self, tokens: TokenStream, only_crate: bool) {
        if self.collect.is_some() {
            return;
        }
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens_where(g.stream(), only_crate),
                TokenTree::Literal(lit) => {
                    if let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&lit.to_string()) {
                        if let Ok(p) = syn::parse_str::<syn::Path>(&s.value()) {
                            let segs = segments(&p);
                            if matches!(segs[0].as_str(), "crate" | "super" | "self") {
                                self.path(&segs);
                            }
                        }
                    }
                }
                TokenTree::Ident(id) => {
                    let preceded = i >= 1
                        && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == ':');
                    // Inside a macro body, a bare name invoking one of the crate's macros.
                    let invokes = matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!')
                        && self.krate.macros.contains_key(&id.to_string());
                    if !preceded && only_crate && invokes {
                        self.macro_call(&[id.to_string()]);
                    } else if !preceded && (!only_crate || id == "crate") {
                        let mut segs = vec![id.to_string()];
                        let mut j = i + 1;
                        while j + 2 < trees.len()
                            && matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == ':')
                            && matches!(&trees[j + 1], TokenTree::Punct(p) if p.as_char() == ':')
                        {
                            if let TokenTree::Ident(next) = &trees[j + 2] {
                                segs.push(next.to_string());
                                j += 3;
                            } else {
                                break;
                            }
                        }
                        if matches!(trees.get(j), Some(TokenTree::Punct(p)) if p.as_char() == '!') {
                            self.macro_call(&segs);
                        } else {
                            self.path(&segs);
                        }
                        i = j;
                        continue;
                    }
                }
                TokenTree::Punct(_) => {}
            }
            i += 1;
        }
    }
}

fn segments(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

impl<'ast> Visit<'ast> for UseVisitor<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if has_cfg_test(&u.attrs) {
            return;
        }
        if let Some(found) = &mut self.collect {
            found.push((self.module.clone(), u.clone()));
            return;
        }
        let mut flat = Vec::new();
        flatten_use(&u.tree, &mut Vec::new(), &mut flat);
        for (path, name) in flat {
            let Some(abs) = absolute(self.krate, &self.module, &path, None) else {
                continue;
            };
            match name {
                // A glob uses the whole module's file.
                None => {
                    if let Some(&file) = self.krate.modules.get(&abs) {
                        self.uses.files.insert(file);
                        if path.first().is_some_and(|s| s == "super") {
                            self.uses.super_globs.push(file);
                        }
                    }
                }
                Some(_) => {
                    self.uses.named.insert(abs.clone());
                    if let Some(file) = defining_file(self.krate, &abs, 0) {
                        self.uses.files.insert(file);
                    }
                }
            }
        }
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if has_cfg_test(&m.attrs) {
            return;
        }
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !has_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !has_cfg_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.path(&segments(p));
        syn::visit::visit_path(self, p);
    }
    // `pub(in crate::x)` restricts who sees an item; it uses nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let segs = segments(&m.path);
        if self
            .krate
            .macros
            .contains_key(segs.last().map_or("", String::as_str))
        {
            self.macro_call(&segs);
        } else {
            self.path(&segs);
        }
        self.tokens(m.tokens.clone());
    }
    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        if m.mac.path.is_ident("macro_rules") {
            self.tokens_where(m.mac.tokens.clone(), true);
        } else {
            syn::visit::visit_item_macro(self, m);
        }
    }
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if a.path().is_ident("doc") {
            return;
        }
        self.tokens(quote::ToTokens::to_token_stream(&a.meta));
    }
}

fn uses_of(krate: &Crate, index: usize) -> Uses {
    let mut uses = UseVisitor::walk(krate, index, None).uses;
    uses.files.remove(&index);
    uses
}

/// Whether a file names the `clap` crate anywhere, test code included: in a path, a `use`, or
/// an attribute (`#[derive(clap::ValueEnum)]`).
fn names_clap(file: &SourceFile) -> bool {
    struct Clap(bool);
    fn in_tokens(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            TokenTree::Ident(id) => id == "clap",
            TokenTree::Group(g) => in_tokens(g.stream()),
            _ => false,
        })
    }
    impl<'ast> Visit<'ast> for Clap {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            self.0 |= p.segments.first().is_some_and(|s| s.ident == "clap");
            syn::visit::visit_path(self, p);
        }
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            let mut flat = Vec::new();
            flatten_use(&u.tree, &mut Vec::new(), &mut flat);
            self.0 |= flat
                .iter()
                .any(|(p, _)| p.first().is_some_and(|s| s == "clap"));
        }
        fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
            if !a.path().is_ident("doc") {
                self.0 |= in_tokens(quote::ToTokens::to_token_stream(&a.meta));
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.0 |= in_tokens(m.tokens.clone());
            syn::visit::visit_macro(self, m);
        }
    }
    let mut v = Clap(false);
    v.visit_file(&file.ast);
    v.0
}

/// How [`top`] names `lib.rs`.
const LIB: &str = "(lib.rs)";

/// The top-level module (folder or leaf file) a file belongs to.
fn top(file: &SourceFile) -> &str {
    file.module.first().map_or(LIB, String::as_str)
}

/// Every edge between non-test files: (from, to).
fn edges(krate: &Crate) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..krate.files.len() {
        if krate.files[i].test {
            continue;
        }
        for to in uses_of(krate, i).files {
            if !krate.files[to].test {
                out.push((i, to));
            }
        }
    }
    out
}

/// Back-arrows: "from (folder) -> to (folder)" for every file edge that points up [`ORDER`].
/// `lib.rs` itself is below every layer: it declares the modules, re-exports `Error` and holds
/// the crate's constants (name, versions, the extension's id), and uses nothing else (its
/// `pub use` is followed to the file that defines the item).
fn back_arrows(krate: &Crate, order: &[&str]) -> Vec<String> {
    let rank = |name: &str| order.iter().position(|o| *o == name);
    let mut found = Vec::new();
    for (from, to) in edges(krate) {
        let (a, b) = (&krate.files[from], &krate.files[to]);
        let (ta, tb) = (top(a), top(b));
        if ta == tb || ta == LIB || tb == LIB {
            continue;
        }
        match (rank(ta), rank(tb)) {
            (Some(ra), Some(rb)) if ra > rb => {}
            (Some(_), Some(_)) => found.push(format!(
                "{ta} -> {tb}: src/{} uses src/{} ({tb} is above {ta} in the order)",
                a.rel, b.rel
            )),
            _ => found.push(format!(
                "{ta} -> {tb}: src/{} uses src/{}, and the order names not both",
                a.rel, b.rel
            )),
        }
    }
    found
}

/// Cycles between files: each strongly connected set of more than one file, with its edges.
fn file_cycles(krate: &Crate) -> Vec<String> {
    let edges = edges(krate);
    let n = krate.files.len();
    let mut next = vec![Vec::new(); n];
    for &(a, b) in &edges {
        next[a].push(b);
    }
    let reach = |start: usize| {
        let mut seen = vec![false; n];
        let mut stack = vec![start];
        while let Some(x) = stack.pop() {
            for &y in &next[x] {
                if !seen[y] {
                    seen[y] = true;
                    stack.push(y);
                }
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..n).map(reach).collect();
    let mut done = vec![false; n];
    let mut found = Vec::new();
    for a in 0..n {
        if done[a] || !reaches[a][a] {
            continue;
        }
        let members: Vec<usize> = (0..n).filter(|&b| reaches[a][b] && reaches[b][a]).collect();
        for &m in &members {
            done[m] = true;
        }
        if members.len() < 2 {
            continue;
        }
        let inner: Vec<String> = edges
            .iter()
            .filter(|(x, y)| members.contains(x) && members.contains(y))
            .map(|&(x, y)| format!("src/{} -> src/{}", krate.files[x].rel, krate.files[y].rel))
            .collect();
        found.push(format!("cycle: {}", inner.join(", ")));
    }
    found
}

/// Fails with `what` (which says what to do) and every finding, one a line, unless none.
fn assert_none(found: &[String], what: &str) {
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
}

/// `src/<file>` for every file of the crate `pick` picks.
fn files_where(krate: &Crate, pick: impl Fn(usize) -> bool) -> Vec<String> {
    (0..krate.files.len())
        .filter(|&i| pick(i))
        .map(|i| format!("src/{}", krate.files[i].rel))
        .collect()
}

/// The name an item defines, if it is one a path can name (fn, type, const, static, trait).
fn item_ident(item: &syn::Item) -> Option<String> {
    Some(match item {
        syn::Item::Fn(f) => f.sig.ident.to_string(),
        syn::Item::Struct(s) => s.ident.to_string(),
        syn::Item::Enum(e) => e.ident.to_string(),
        syn::Item::Const(c) => c.ident.to_string(),
        syn::Item::Static(s) => s.ident.to_string(),
        syn::Item::Type(t) => t.ident.to_string(),
        syn::Item::Trait(t) => t.ident.to_string(),
        _ => return None,
    })
}

fn item_named(items: &[syn::Item], name: &str) -> bool {
    items
        .iter()
        .any(|i| !has_cfg_test(item_attrs(i)) && item_ident(i).as_deref() == Some(name))
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(f) => &f.attrs,
        syn::Item::Struct(s) => &s.attrs,
        syn::Item::Enum(e) => &e.attrs,
        syn::Item::Const(c) => &c.attrs,
        syn::Item::Static(s) => &s.attrs,
        syn::Item::Type(t) => &t.attrs,
        syn::Item::Trait(t) => &t.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(m) => &m.attrs,
        syn::Item::Use(u) => &u.attrs,
        syn::Item::Macro(m) => &m.attrs,
        _ => &[],
    }
}

/// Lines `from..=to` (1-based) of `text` that are code: not blank, not a comment.
fn code_lines(text: &str, from: usize, to: usize) -> usize {
    text.lines()
        .skip(from.saturating_sub(1))
        .take(to + 1 - from)
        .filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("//")
        })
        .count()
}

fn span_lines(item: &syn::Item) -> (usize, usize) {
    use syn::spanned::Spanned;
    let span = item.span();
    // Attributes (doc comments included) are part of the span: the count skips comments, and
    // `#[derive]` lines are code.
    (span.start().line, span.end().line)
}

/// The crate with the binary's `src/main.rs` added as a module `main` (its
/// `about_startup_host::` read as `crate::`): where every run of the binary, root's included,
/// begins. Only the count of root's lines uses it; the layering tests look at the library alone.
fn load_with_main() -> Crate {
    load_with_main_text(&fs::read_to_string(src_dir().join("main.rs")).unwrap())
}

/// [`load_with_main`] with `text` as `src/main.rs` (a test plants its own).
fn load_with_main_text(text: &str) -> Crate {
    let mut krate = load();
    let text = text.replace("about_startup_host::", "crate::");
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("parse main.rs: {e}"));
    let index = krate.files.len();
    krate.modules.insert(vec!["main".into()], index);
    krate.files.push(SourceFile {
        rel: "main.rs".into(),
        module: vec!["main".into()],
        test: false,
        ast,
    });
    let aliases = collect_aliases(&krate, index);
    krate.aliases.push(aliases);
    krate
}

/// The items of `module` (a file's own, or an inline module's inside it).
fn module_items<'a>(file: &'a SourceFile, module: &[String]) -> &'a [syn::Item] {
    let mut items = file.ast.items.as_slice();
    for name in &module[file.module.len()..] {
        let inner = items.iter().find_map(|it| match it {
            syn::Item::Mod(m) if m.ident == name.as_str() => m.content.as_ref(),
            _ => None,
        });
        match inner {
            Some((_, inner)) => items = inner,
            None => return &[],
        }
    }
    items
}

/// Every non-test `impl` block of the crate, by the absolute path of the type it is for (the
/// methods a value's `.call()` reaches: a path names the type, never the method).
/// An item found in a file (its index) and module.
type Found = (usize, Vec<String>, syn::Item);

fn impls_by_type(krate: &Crate) -> BTreeMap<Vec<String>, Vec<Found>> {
    let mut out: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for (index, file) in krate.files.iter().enumerate() {
        if file.test {
            continue;
        }
        let mut modules = vec![file.module.clone()];
        while let Some(module) = modules.pop() {
            for item in module_items(file, &module) {
                match item {
                    syn::Item::Impl(i) if !has_cfg_test(&i.attrs) => {
                        let syn::Type::Path(ty) = &*i.self_ty else {
                            continue;
                        };
                        let segs = segments(&ty.path);
                        let abs = absolute(krate, &module, &segs, Some(&krate.aliases[index]))
                            .or_else(|| {
                                (segs.len() == 1
                                    && item_named(module_items(file, &module), &segs[0]))
                                .then(|| [module.clone(), segs.clone()].concat())
                            });
                        if let Some(abs) = abs {
                            out.entry(abs)
                                .or_default()
                                .push((index, module.clone(), item.clone()));
                        }
                    }
                    syn::Item::Mod(m) if m.content.is_some() && !has_cfg_test(&m.attrs) => {
                        modules.push([module.clone(), vec![m.ident.to_string()]].concat());
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// Where root's part begins: the binary's `main`. It is followed from its first line up to
/// and including the statement that calls `tracer::entry` (everything there runs as whoever ran
/// the binary, root included): whatever `main` does after `entry` returns runs as the user
/// (the sudo split's child, after its drop) or as whoever ran the CLI.
const ROOT_ENTRY: [&str; 2] = ["main", "main"];

/// `main` with the statements after the one that calls `tracer::entry` left out; the whole
/// of it where none does (then everything it names is root's).
fn up_to_the_entry(item: &syn::Item) -> syn::Item {
    let mut item = item.clone();
    if let syn::Item::Fn(f) = &mut item {
        let calls_entry = |stmt: &syn::Stmt| {
            let text = quote::ToTokens::to_token_stream(stmt).to_string();
            text.contains("tracer :: entry")
        };
        if let Some(at) = f.block.stmts.iter().position(calls_entry) {
            f.block.stmts.truncate(at + 1);
        }
    }
    item
}

/// The code lines that run as root: every non-test item reachable from [`ROOT_ENTRY`] (each
/// function, type, constant and static a reached item names, in any module, and every `impl`
/// block of a reached type), in lines of code: no blank line, no comment, attributes (derives)
/// included, `use` and `mod` lines not. Per file: (lines, the items counted).
fn root_lines(krate: &Crate) -> BTreeMap<String, (usize, Vec<String>)> {
    let impls = impls_by_type(krate);
    let mut out: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut queue: Vec<Vec<String>> = vec![ROOT_ENTRY.map(String::from).to_vec()];
    while let Some(abs) = queue.pop() {
        let Some((len, &index)) = (0..abs.len())
            .rev()
            .find_map(|n| krate.modules.get(&abs[..n]).map(|f| (n, f)))
        else {
            continue;
        };
        // A module, or an item already counted (`Item::Variant` and `Type::method` are the
        // item's).
        if len == abs.len() || !seen.insert(abs[..=len].to_vec()) {
            continue;
        }
        let file = &krate.files[index];
        let module = abs[..len].to_vec();
        let name = &abs[len];
        let item = module_items(file, &module)
            .iter()
            .find(|it| !has_cfg_test(item_attrs(it)) && item_ident(it).as_deref() == Some(name));
        let Some(item) = item else {
            // A re-export (`pub use`): what it names.
            if let Some(target) = krate.aliases[index].get(name) {
                queue.push([target.clone(), abs[len + 1..].to_vec()].concat());
            }
            continue;
        };
        let mut reached = vec![(index, module.clone(), item.clone(), name.clone())];
        for (i, m, imp) in impls.get(&abs[..=len]).into_iter().flatten() {
            reached.push((*i, m.clone(), imp.clone(), format!("impl {name}")));
        }
        for (index, module, item, label) in reached {
            let file = &krate.files[index];
            let text = fs::read_to_string(src_dir().join(&file.rel)).unwrap();
            let (a, b) = span_lines(&item);
            let entry = out.entry(format!("src/{}", file.rel)).or_default();
            entry.0 += code_lines(&text, a, b);
            let is_main = module == ROOT_ENTRY[..1] && label == ROOT_ENTRY[1];
            entry.1.push(label);
            let mut v = UseVisitor {
                krate,
                index,
                module: module.clone(),
                uses: Uses::default(),
                collect: None,
                expanding: Vec::new(),
            };
            if is_main {
                v.visit_item(&up_to_the_entry(&item));
            } else {
                v.visit_item(&item);
            }
            queue.extend(v.uses.named);
        }
    }
    out
}

/// The most code lines root's part may have before this test asks for a look (docs/design/
/// privilege.md quotes the count this test prints).
const ROOT_LINES_BUDGET: usize = 1670;

#[test]
fn what_main_runs_before_the_entry_is_counted_as_roots() {
    // Planted as a careless change would: the CLI run before `tracer::entry`, as root under
    // sudo. The count must then reach the CLI; what runs after the entry it must not.
    let main = fs::read_to_string(src_dir().join("main.rs")).unwrap();
    let planted = main.replacen(
        "    let started = tracer::entry(&args);",
        "    let _ = about_startup_host::cli::run(args.clone());\n    let started = tracer::entry(&args);",
        1,
    );
    assert_ne!(
        planted, main,
        "main.rs calls `tracer::entry` in its own statement"
    );
    let before = root_lines(&load_with_main());
    let after = root_lines(&load_with_main_text(&planted));
    assert!(
        !before.keys().any(|f| f.starts_with("src/cli/")),
        "{before:?}"
    );
    assert!(after.keys().any(|f| f.starts_with("src/cli/")));
    let total = |c: &BTreeMap<String, (usize, Vec<String>)>| c.values().map(|v| v.0).sum::<usize>();
    assert!(total(&after) > total(&before) + 100);
}

#[test]
fn the_code_that_runs_as_root_is_counted_and_stays_small() {
    let krate = load_with_main();
    let counted = root_lines(&krate);
    let total: usize = counted.values().map(|(n, _)| n).sum();
    println!(
        "code lines that run as root (every item reachable from main.rs's `main` through \
         `tracer::entry`): {total}"
    );
    for (file, (n, items)) in &counted {
        println!("  {n:>5}  {file} ({})", items.join(", "));
    }
    // The walk reaches what it must: the entry, the session, the floor it calls.
    for (file, item) in [
        ("src/tracer/mod.rs", "entry"),
        ("src/tracer/session.rs", "serve"),
        ("src/tracer/split.rs", "split"),
        ("src/os/account.rs", "become_user"),
        ("src/framing.rs", "read_frame"),
    ] {
        assert!(
            counted
                .get(file)
                .is_some_and(|(_, items)| items.iter().any(|i| i == item)),
            "{file} {item} is not counted: the walk from main misses root's part"
        );
    }
    assert!(
        total <= ROOT_LINES_BUDGET,
        "{total} code lines run as root, over the budget of {ROOT_LINES_BUDGET}: make root's part smaller"
    );
}

#[test]
fn no_folder_uses_one_above_it() {
    let krate = load();
    assert_none(
        &back_arrows(&krate, ORDER),
        &format!("back-arrows against the order {ORDER:?} (move the item down to the floor, or the user up)"),
    );
}

/// The modules root's part (src/tracer/, the code that runs as root) may use: the ground floor
/// and the frames. Everything it reaches runs as root, so the count of root's lines
/// (docs/design/privilege.md) is `tracer/` plus what it uses of these.
const TRACER_MAY_USE: &[&str] = &["tracer", "os", "framing"];

/// Every module `tracer/` uses that is not in [`TRACER_MAY_USE`].
fn tracer_reaches_beyond_the_floor(krate: &Crate) -> Vec<String> {
    edges(krate)
        .into_iter()
        .filter(|(from, to)| {
            top(&krate.files[*from]) == "tracer"
                && !TRACER_MAY_USE.contains(&top(&krate.files[*to]))
        })
        .map(|(from, to)| {
            format!(
                "src/{} uses src/{}",
                krate.files[from].rel, krate.files[to].rel
            )
        })
        .collect()
}

#[test]
fn the_tracer_uses_only_the_floor() {
    let krate = load();
    assert_none(
        &tracer_reaches_beyond_the_floor(&krate),
        "root's part (src/tracer/) uses more than the floor: keep it to os/ and framing.rs, so \
         what runs as root stays small and reviewed",
    );
}

#[test]
fn no_two_files_use_each_other() {
    let krate = load();
    assert_none(
        &file_cycles(&krate),
        "files that use each other (move what both need into a file both may use)",
    );
}

#[test]
fn no_glob_import_of_super_outside_tests() {
    let krate = load();
    assert_none(
        &files_where(&krate, |i| !uses_of(&krate, i).super_globs.is_empty()),
        "`use super::*` outside test code (name what the file uses)",
    );
}

#[test]
fn clap_only_in_cli() {
    let krate = load();
    assert_none(
        &files_where(&krate, |i| {
            top(&krate.files[i]) != "cli" && names_clap(&krate.files[i])
        }),
        "clap outside src/cli/ (keep a plain type here and its clap twin in cli/)",
    );
}

#[test]
fn every_top_level_module_is_in_the_order() {
    let krate = load();
    let tops: BTreeSet<&str> = krate
        .files
        .iter()
        .filter(|f| f.module.len() == 1)
        .map(|f| f.module[0].as_str())
        .collect();
    let listed: BTreeSet<&str> = ORDER.iter().copied().collect();
    assert_eq!(tops, listed, "lib.rs's modules and ORDER differ");
}

#[test]
fn every_source_file_is_reached_from_lib_rs() {
    let krate = load();
    let reached: BTreeSet<&str> = krate.files.iter().map(|f| f.rel.as_str()).collect();
    let mut on_disk = Vec::new();
    let mut dirs = vec![src_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(src_dir())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel != "main.rs" && !reached.contains(rel.as_str()) {
                    on_disk.push(rel);
                }
            }
        }
    }
    assert!(
        on_disk.is_empty(),
        "files no `mod` reaches, so unchecked: {on_disk:?}"
    );
}

/// The check itself, against planted defects: a small crate of two layers (`os` below `trace`)
/// whose `os/` files reach `trace/` only through macros. Each must be found; a macro whose body
/// stays in `os` must not be.
#[test]
fn a_macro_is_resolved_to_its_file_and_its_body_to_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let files = [
        (
            "lib.rs",
            "pub mod os;\npub mod trace;\n\
             #[macro_export]\nmacro_rules! to_trace { () => { $crate::trace::deep() }; }\n\
             #[macro_export]\nmacro_rules! indirect { () => { $crate::to_trace!() }; }\n\
             #[macro_export]\nmacro_rules! harmless { () => { $crate::os::e::x() }; }\n",
        ),
        (
            "os/mod.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod e;\n",
        ),
        // An exported macro of lib.rs, by its crate path.
        ("os/a.rs", "pub fn f() { crate::to_trace!() }\n"),
        // An exported macro of trace/, by its bare name.
        ("os/b.rs", "pub fn f() { from_trace!() }\n"),
        // Invoked inside another macro's tokens.
        (
            "os/c.rs",
            "pub fn f() -> String { format!(\"{:?}\", crate::to_trace!()) }\n",
        ),
        // A macro whose body invokes the one that reaches up.
        ("os/d.rs", "pub fn f() { crate::indirect!() }\n"),
        // A macro of lib.rs whose body stays in os/: no arrow.
        (
            "os/e.rs",
            "pub fn x() {}\npub fn f() { crate::harmless!() }\n",
        ),
        (
            "trace/mod.rs",
            "pub fn deep() {}\n\
             #[macro_export]\nmacro_rules! from_trace { () => { $crate::trace::deep() }; }\n",
        ),
    ];
    for (rel, text) in files {
        let path = src.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let krate = load_from(src);
    let found = back_arrows(&krate, &["os", "trace"]);
    let expected: Vec<String> = ["a", "b", "c", "d"]
        .iter()
        .map(|f| {
            format!(
                "os -> trace: src/os/{f}.rs uses src/trace/mod.rs (trace is above os in the order)"
            )
        })
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn lib_doc_states_the_same_order() {
    let text = fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    let doc: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let start = doc
        .find(ORDER_MARKER)
        .unwrap_or_else(|| panic!("lib.rs's doc lacks the sentence {ORDER_MARKER:?}"));
    let sentence = &doc[start + ORDER_MARKER.len()..];
    let sentence = &sentence[..sentence.find(". ").unwrap_or(sentence.len())];
    let named: Vec<&str> = sentence.split('`').skip(1).step_by(2).collect();
    assert_eq!(named, ORDER, "lib.rs's doc and this test's ORDER differ");
}

/// One Rust test layout: a module's unit tests are its `#[cfg(test)] mod tests`, written inline
/// or, when long, in a file of their own beside it: `tests.rs` for a folder's `mod.rs`,
/// `<name>_tests.rs` (through `#[path]`) for `<name>.rs`; helpers shared by a folder's tests are
/// its `mod.rs`'s `#[cfg(test)] mod test_support`. Black-box tests of the binary live in
/// `native-host/tests/`. A test file by any other name or in any other place fails here.
#[test]
fn every_test_file_is_the_tests_module_of_the_file_beside_it() {
    let krate = load();
    let mut wrong = Vec::new();
    for (i, file) in krate.files.iter().enumerate() {
        let path = Path::new(&file.rel);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let looks_like_tests = name == "tests.rs" || name.ends_with("_tests.rs");
        if !file.test && !looks_like_tests {
            continue;
        }
        // A file of tests/support/ that a test_support module includes with `#[path]`: shared
        // with the integration tests, which cannot reach the crate's cfg(test) items.
        let shared = src_dir().join(&file.rel).canonicalize().ok();
        let support = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/support")
            .canonicalize()
            .ok();
        let parent_module = &file.module[..file.module.len().saturating_sub(1)];
        if file.test
            && shared.zip(support).is_some_and(|(p, s)| p.starts_with(s))
            && parent_module.last().map(String::as_str) == Some("test_support")
        {
            continue;
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let expected_module = if name == "test_support.rs" {
            "test_support"
        } else {
            "tests"
        };
        let owner = if name == "tests.rs" || name == "test_support.rs" {
            dir.join("mod.rs")
        } else if let Some(stem) = name.strip_suffix("_tests.rs") {
            dir.join(format!("{stem}.rs"))
        } else {
            PathBuf::new()
        };
        let owner = owner.to_string_lossy().replace('\\', "/");
        let owned_right = file.test
            && file.module.last().map(String::as_str) == Some(expected_module)
            && krate
                .modules
                .get(parent_module)
                .map(|&p| krate.files[p].rel.as_str())
                == Some(owner.as_str());
        if !owned_right {
            wrong.push(format!(
                "{} (module {}, test-only: {})",
                files_where(&krate, |j| j == i)[0],
                file.module.join("::"),
                file.test
            ));
        }
    }
    assert_none(
        &wrong,
        "test files that are not the `#[cfg(test)] mod tests` of the file beside them \
         (tests.rs for mod.rs, <name>_tests.rs for <name>.rs)",
    );
}
