//! A crate's modules as written: the tree of `mod` declarations from the root
//! file, each module's imports and items, and every path its code names; and
//! the edges between modules that those paths make once resolved.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use syn::punctuated::Punctuated;
use syn::visit::Visit;

/// A module's index in its crate's list of modules.
pub type ModId = usize;

/// How many `use`s a path may be followed through (a guard against circular
/// re-exports, which rustc refuses anyway).
const MAX_HOPS: usize = 32;

#[derive(Debug, Default)]
struct Module {
    /// Names from the crate root (empty for the root).
    path: Vec<String>,
    parent: Option<ModId>,
    children: BTreeMap<String, ModId>,
    file: PathBuf,
    /// Names bound by `use` (and `pub use`): the path each stands for, as written.
    uses: BTreeMap<String, Vec<String>>,
    /// Modules whose every item a glob `use` brings in.
    globs: Vec<Vec<String>>,
    /// Names of the items defined here.
    items: BTreeSet<String>,
    /// Every path the module's code names (its `use`s included), with its line.
    paths: Vec<(Vec<String>, usize)>,
    /// What each `pub use` makes public, as written, with its line.
    public_uses: Vec<(Vec<String>, usize)>,
}

/// One crate's module tree.
#[derive(Debug)]
pub struct Crate {
    modules: Vec<Module>,
}

impl Crate {
    /// Reads the crate whose root file is `root`, following its `mod` declarations.
    pub fn read(root: &Path) -> Result<Crate> {
        let mut krate = Crate {
            modules: vec![Module {
                file: root.to_owned(),
                ..Module::default()
            }],
        };
        let file = parse(root)?;
        let dir = root.parent().unwrap_or(Path::new(".")).to_owned();
        krate.fill(0, &file.items, &dir)?;
        Ok(krate)
    }

    /// The module's path, as `crate::a::b`.
    pub fn name(&self, m: ModId) -> String {
        std::iter::once("crate")
            .chain(self.modules[m].path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("::")
    }

    /// Every edge between two modules: (from, to, "file:line" of the path).
    ///
    /// A path from `a::x` to `b::y` is also an edge between `a` and `b` and
    /// between each pair of their ancestors below the one they share: a module
    /// holds its children, so a circle that passes through a child (`region`
    /// naming `backend::rfm2g::error`'s type while `backend::rfm2g` names
    /// `region`) is a circle of the modules that hold it.
    pub fn edges(&self) -> Vec<(ModId, ModId, String)> {
        let mut edges = Vec::new();
        for (from, module) in self.modules.iter().enumerate() {
            for (path, line) in &module.paths {
                let Some(to) = self.resolve(from, path, 0) else {
                    continue;
                };
                if to == from || self.is_ancestor(to, from) {
                    continue;
                }
                let at = format!("{}:{line}", module.file.display());
                let sources = self.lineage_below(from, to);
                let sources = if sources.is_empty() {
                    vec![from]
                } else {
                    sources
                };
                for &a in &sources {
                    for b in self.lineage_below(to, from) {
                        edges.push((a, b, at.clone()));
                    }
                }
            }
        }
        edges
    }

    /// Every `pub use` whose path starts at one of `crates` (library names, as
    /// `rfm_memory`): (module, the path made public, "file:line").
    pub fn re_exports_of(&self, crates: &[String]) -> Vec<(ModId, String, String)> {
        let mut found = Vec::new();
        for (m, module) in self.modules.iter().enumerate() {
            for (path, line) in &module.public_uses {
                if path.first().is_some_and(|c| crates.contains(c)) {
                    let at = format!("{}:{line}", module.file.display());
                    found.push((m, path.join("::"), at));
                }
            }
        }
        found
    }

    fn is_ancestor(&self, a: ModId, mut of: ModId) -> bool {
        while let Some(p) = self.modules[of].parent {
            if p == a {
                return true;
            }
            of = p;
        }
        false
    }

    /// `m` and its ancestors that are not also `other`'s ancestors (nor
    /// `other` itself): empty when `m` holds `other`.
    fn lineage_below(&self, m: ModId, other: ModId) -> Vec<ModId> {
        let shared = |a: ModId| a == other || self.is_ancestor(a, other);
        std::iter::successors(Some(m), |&a| self.modules[a].parent)
            .take_while(|&a| !shared(a))
            .collect()
    }

    /// The module that defines the item `path` names, as seen from module `m`;
    /// `None` for what lies outside the crate (another crate, the prelude, a
    /// generic parameter) or is defined in `m` itself.
    fn resolve(&self, m: ModId, path: &[String], hops: usize) -> Option<ModId> {
        if hops > MAX_HOPS || path.is_empty() {
            return None;
        }
        let (mut cur, mut i) = match path[0].as_str() {
            "crate" => (0, 1),
            "self" => (m, 1),
            "super" => {
                let mut cur = m;
                let mut i = 0;
                while path.get(i).map(String::as_str) == Some("super") {
                    cur = self.modules[cur].parent?;
                    i += 1;
                }
                (cur, i)
            }
            first => {
                let module = &self.modules[m];
                if let Some(&child) = module.children.get(first) {
                    (child, 1)
                } else if let Some(target) = module.uses.get(first) {
                    return self.follow(m, target, &path[1..], hops);
                } else if module.items.contains(first) {
                    return None;
                } else {
                    return self.through_globs(m, path, hops);
                }
            }
        };
        while let Some(name) = path.get(i) {
            let module = &self.modules[cur];
            if let Some(&child) = module.children.get(name) {
                cur = child;
                i += 1;
            } else if let Some(target) = module
                .uses
                .get(name)
                .filter(|_| !module.items.contains(name))
            {
                return self.follow(cur, target, &path[i + 1..], hops).or(Some(cur));
            } else if !module.items.contains(name) && !module.globs.is_empty() {
                return self.through_globs(cur, &path[i..], hops).or(Some(cur));
            } else {
                return Some(cur);
            }
        }
        Some(cur)
    }

    /// `rest` of a path whose first name `m` imports as `target`.
    fn follow(&self, m: ModId, target: &[String], rest: &[String], hops: usize) -> Option<ModId> {
        let whole: Vec<String> = target.iter().chain(rest).cloned().collect();
        self.resolve(m, &whole, hops + 1)
    }

    /// A name that `m` may have from one of its glob imports.
    fn through_globs(&self, m: ModId, path: &[String], hops: usize) -> Option<ModId> {
        self.modules[m].globs.iter().find_map(|glob| {
            let source =
                self.resolve(m, &[glob.clone(), vec!["self".into()]].concat(), hops + 1)?;
            let module = &self.modules[source];
            let known = module.items.contains(&path[0])
                || module.uses.contains_key(&path[0])
                || module.children.contains_key(&path[0]);
            known.then(|| self.resolve(source, path, hops + 1).unwrap_or(source))
        })
    }

    /// Reads `items` into module `m`, whose child files are found under `dir`.
    fn fill(&mut self, m: ModId, items: &[syn::Item], dir: &Path) -> Result<()> {
        for item in items {
            if is_test_only(item) {
                continue;
            }
            if let Some(name) = item_name(item) {
                self.modules[m].items.insert(name);
            }
            match item {
                syn::Item::Mod(module) => self.add_child(m, module, dir)?,
                syn::Item::Use(u) => {
                    let mut prefix = Vec::new();
                    let line = u.use_token.span.start().line;
                    self.add_use(m, &u.tree, &mut prefix, line);
                    if matches!(u.vis, syn::Visibility::Public(_)) {
                        let module = &mut self.modules[m];
                        for path in leaves(&u.tree) {
                            module.public_uses.push((path, line));
                        }
                    }
                }
                other => {
                    let mut paths = Paths::default();
                    paths.visit_item(other);
                    self.modules[m].paths.extend(paths.found);
                }
            }
        }
        Ok(())
    }

    fn add_child(&mut self, m: ModId, module: &syn::ItemMod, dir: &Path) -> Result<()> {
        let name = module.ident.to_string();
        let id = self.modules.len();
        let mut path = self.modules[m].path.clone();
        path.push(name.clone());
        let child_dir = dir.join(&name);
        let (file, items, inner_dir) = match &module.content {
            Some((_, items)) => (self.modules[m].file.clone(), items.to_vec(), child_dir),
            None => {
                let file = match path_attr(module) {
                    Some(p) => dir.join(p),
                    None if dir.join(format!("{name}.rs")).exists() => {
                        dir.join(format!("{name}.rs"))
                    }
                    None => child_dir.join("mod.rs"),
                };
                let parsed = parse(&file)?;
                (file, parsed.items, child_dir)
            }
        };
        self.modules.push(Module {
            path,
            parent: Some(m),
            file,
            ..Module::default()
        });
        self.modules[m].children.insert(name, id);
        self.fill(id, &items, &inner_dir)
    }

    fn add_use(&mut self, m: ModId, tree: &syn::UseTree, prefix: &mut Vec<String>, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.add_use(m, &p.tree, prefix, line);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.bind(m, prefix, n.ident.to_string(), None, line),
            syn::UseTree::Rename(r) => self.bind(
                m,
                prefix,
                r.ident.to_string(),
                Some(r.rename.to_string()),
                line,
            ),
            syn::UseTree::Glob(_) => {
                self.modules[m].globs.push(prefix.clone());
                self.modules[m].paths.push((prefix.clone(), line));
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.add_use(m, tree, prefix, line);
                }
            }
        }
    }

    /// `use prefix::name as alias;` (`self` names the prefix itself).
    fn bind(
        &mut self,
        m: ModId,
        prefix: &[String],
        name: String,
        alias: Option<String>,
        line: usize,
    ) {
        let (target, bound) = if name == "self" {
            (
                prefix.to_vec(),
                alias.unwrap_or_else(|| prefix.last().cloned().unwrap_or_default()),
            )
        } else {
            let mut target = prefix.to_vec();
            target.push(name.clone());
            (target, alias.unwrap_or(name))
        };
        let module = &mut self.modules[m];
        module.paths.push((target.clone(), line));
        if bound != "_" {
            module.uses.insert(bound, target);
        }
    }
}

/// The paths a `use` tree names, one per leaf (`a::{b, c as d}`: `a::b`, `a::c`;
/// a glob as `a::*`).
fn leaves(tree: &syn::UseTree) -> Vec<Vec<String>> {
    match tree {
        syn::UseTree::Path(p) => leaves(&p.tree)
            .into_iter()
            .map(|rest| std::iter::once(p.ident.to_string()).chain(rest).collect())
            .collect(),
        syn::UseTree::Name(n) => vec![vec![n.ident.to_string()]],
        syn::UseTree::Rename(r) => vec![vec![r.ident.to_string()]],
        syn::UseTree::Glob(_) => vec![vec!["*".to_owned()]],
        syn::UseTree::Group(g) => g.items.iter().flat_map(leaves).collect(),
    }
}

fn parse(file: &Path) -> Result<syn::File> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))
}

/// `#[cfg(test)]` on an item: not part of the module's code.
fn is_test_only(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        _ => return false,
    };
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

/// The name an item defines in its module's namespace, if any.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

/// `#[path = "file.rs"]` on a `mod` declaration.
fn path_attr(module: &syn::ItemMod) -> Option<String> {
    module.attrs.iter().find_map(|a| match &a.meta {
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

/// Every path in an item, nested modules excepted (each is a module of its own).
/// Macro arguments that parse as expressions (`vec![…]`, `assert!(…)`,
/// `format!(…)`) are searched too.
#[derive(Default)]
struct Paths {
    found: Vec<(Vec<String>, usize)>,
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = path.segments.first() {
            self.found.push((segments, first.ident.span().start().line));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Ok(args) =
            mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        {
            for arg in &args {
                self.visit_expr(arg);
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}
