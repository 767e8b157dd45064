//! Functions no entry point reaches, taken out of a composed module's text.
//!
//! A module composes whole files: a field's generated functions, its shim, a kernel. A kernel
//! calls a few of them (the curve VM multiplies through `fe_mul_packed` alone), and every
//! function left in costs twice before the GPU runs anything: naga's WGSL front end, whose
//! type resolution grows with the square of a function's expression count, and the driver's
//! compile of the SPIR-V. [`prune`] keeps the functions the module's entry points (`@compute`,
//! `@vertex`, `@fragment`) reach through calls and replaces every other `fn` item with as many
//! empty lines as it had, so line numbers (and [`crate::Composed::locate`]) stay true. Other
//! items (constants, types, variables) stay: they are cheap, and a constant may be used by a
//! function that stays. A module without entry points (a field library) is left whole.
//!
//! The scan knows only what the reachability needs of WGSL: line comments, nested block
//! comments, braces, identifiers and the `fn` keyword at the top level. A name is taken as a
//! call wherever it appears (a local variable that shares a function's name keeps that
//! function: the mistake is only ever to keep too much). naga validates every pruned module
//! at build time, so a function taken out that was needed fails the build.

use std::collections::{HashMap, HashSet};

/// One top-level `fn` item: its name, byte range and the identifiers in its text.
struct Item<'a> {
    name: &'a str,
    range: std::ops::Range<usize>,
    entry: bool,
    names: HashSet<&'a str>,
}

/// `text` with the functions no entry point reaches replaced by empty lines.
pub(crate) fn prune(text: &str) -> String {
    let items = items(text);
    if !items.iter().any(|i| i.entry) {
        return text.to_owned();
    }
    let by_name: HashMap<&str, usize> =
        items.iter().enumerate().map(|(k, i)| (i.name, k)).collect();
    let mut kept = vec![false; items.len()];
    let mut todo: Vec<usize> = (0..items.len()).filter(|&k| items[k].entry).collect();
    while let Some(k) = todo.pop() {
        if std::mem::replace(&mut kept[k], true) {
            continue;
        }
        todo.extend(
            items[k]
                .names
                .iter()
                .filter_map(|n| by_name.get(n).copied()),
        );
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (item, _) in items.iter().zip(&kept).filter(|(_, kept)| !**kept) {
        out.push_str(&text[at..item.range.start]);
        let lines = text[item.range.clone()].matches('\n').count();
        out.extend(std::iter::repeat_n('\n', lines));
        at = item.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The top-level `fn` items of `text`, in order.
fn items(text: &str) -> Vec<Item<'_>> {
    let b = text.as_bytes();
    let mut items: Vec<Item<'_>> = Vec::new();
    // Where the current top-level item began (after the last `;` or `}` at depth 0), whether
    // it has an entry point's attribute, and the `fn` being read.
    let mut item_start = 0;
    let mut entry = false;
    let mut open: Option<(usize, &str)> = None;
    let mut names: HashSet<&str> = HashSet::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = block_comment_end(b, i);
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some((start, name)) = open.take() {
                        items.push(Item {
                            name,
                            range: start..i + 1,
                            entry,
                            names: std::mem::take(&mut names),
                        });
                    }
                    item_start = i + 1;
                    entry = false;
                }
            }
            b';' if depth == 0 && open.is_none() => {
                item_start = i + 1;
                entry = false;
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let end = i + b[i..]
                    .iter()
                    .take_while(|c| **c == b'_' || c.is_ascii_alphanumeric())
                    .count();
                let word = &text[i..end];
                let attribute = i > 0 && b[i - 1] == b'@';
                if attribute && matches!(word, "compute" | "vertex" | "fragment") && depth == 0 {
                    entry = true;
                } else if word == "fn" && depth == 0 && open.is_none() {
                    let rest = &text[end..];
                    let skip = rest.len() - rest.trim_start().len();
                    let from = end + skip;
                    let to = from
                        + b[from..]
                            .iter()
                            .take_while(|c| **c == b'_' || c.is_ascii_alphanumeric())
                            .count();
                    open = Some((item_start, &text[from..to]));
                    i = to;
                    continue;
                } else if open.is_some() {
                    names.insert(word);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    items
}

/// The byte after the block comment that opens at `at` (WGSL's block comments nest).
fn block_comment_end(b: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut i = at;
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::prune;

    const MODULE: &str = "\
const K: u32 = 3u;
// fn in_a_comment() { }
fn used(a: u32) -> u32 {
    /* a /* nested */ comment { */
    return helper(a) + K;
}
fn helper(a: u32) -> u32 {
    return a;
}
fn unused(a: u32) -> u32 {
    return helper(a) * 2u;
}
fn only_unused_calls() -> u32 { return 1u; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let x = used(g.x);
}
";

    #[test]
    fn keeps_what_entry_points_reach_and_blanks_the_rest_line_for_line() {
        let out = prune(MODULE);
        assert_eq!(out.lines().count(), MODULE.lines().count());
        for kept in ["fn used(", "fn helper(", "fn main(", "const K", "@compute"] {
            assert!(out.contains(kept), "{kept} was taken out");
        }
        for gone in ["fn unused(", "fn only_unused_calls("] {
            assert!(!out.contains(gone), "{gone} was kept");
        }
        // Lines keep their numbers: `fn main` is where it was.
        let line = |t: &str| t.lines().position(|l| l.starts_with("fn main")).unwrap();
        assert_eq!(line(&out), line(MODULE));
    }

    #[test]
    fn a_module_without_entry_points_is_left_whole() {
        let library = "fn a() -> u32 { return 1u; }\nfn b() -> u32 { return a(); }\n";
        assert_eq!(prune(library), library);
    }
}
