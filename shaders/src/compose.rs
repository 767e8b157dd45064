//! Shader composition: which WGSL fragments, in which order, make each shipped module.
//!
//! This file is compiled twice: into the library, and into `build.rs` (through `#[path]`),
//! which validates every module [`all`] lists with naga before anything can ship it. It
//! therefore uses only `std`, `zkgpu-limbs` (the registry of arithmetics and the names of the
//! generated files) and `crate::files::text` (the WGSL files of `shaders/`: embedded in the
//! library, read from disk by `build.rs`).
//!
//! Every module that multiplies is composed for one field arithmetic ([`Arith`]): the field's
//! module, then the arithmetic's multiplications of that field (`<stem>_mul_<arith>.wgsl`),
//! which define the same functions (`fq_mul`, `fq_square`, `fq_mul_packed`) in every
//! arithmetic, so kernels and shims are the same for all of them.
//!
//! WGSL has no namespaces or generics. Generated field modules use fixed prefixes (`fq_`,
//! `fr_`, `fq2_`); kernels that work over any field are written against `Fe` and `fe_*`, and
//! [`field_shim`] binds those names to one field with a few one-line forwarding functions
//! (inlined by every compiler, so they add no call sites).

use crate::field::FieldModule;
use crate::group::Group;
use crate::pairing::Pairing;
use zkgpu_limbs::Arith;
use zkgpu_limbs::wgsl::{lazy_mul_stem, mul_stem, native_stem};

/// One piece of WGSL: a file of `shaders/`, or text made here.
#[derive(Clone, Debug)]
pub struct Part {
    /// Where it comes from, for error messages: `shaders/...` or `<shim ...>`.
    pub origin: String,
    /// The WGSL text.
    pub text: String,
}

/// A shader module: parts concatenated in order.
#[derive(Clone, Debug)]
pub struct Composed {
    /// Stable name, also the wgpu label: `field_ops/bls12_381_fq`, with `@<arith>` after it
    /// for a 64-bit arithmetic (`field_ops/bls12_381_fq@f64`).
    pub name: String,
    /// The parts, in order.
    pub parts: Vec<Part>,
    /// The field arithmetic it multiplies with (what the device must support to run it).
    pub arith: Arith,
}

impl Composed {
    /// The WGSL source: the parts in order, less the functions no entry point reaches (their
    /// lines left empty, so that [`Composed::locate`] holds; `crate::prune` says why).
    pub fn source(&self) -> String {
        let mut s = String::new();
        for p in &self.parts {
            s.push_str(&p.text);
            if !p.text.ends_with('\n') {
                s.push('\n');
            }
        }
        crate::prune::prune(&s)
    }

    /// Maps a 1-based line of [`Composed::source`] back to (origin, 1-based line in the part).
    pub fn locate(&self, line: usize) -> Option<(String, usize)> {
        let mut first = 1usize;
        for p in &self.parts {
            let lines = p.text.lines().count().max(1);
            if line < first + lines {
                return Some((p.origin.clone(), line - first + 1));
            }
            first += lines;
        }
        None
    }
}

/// The file `shaders/{path}` as a part.
///
/// # Panics
/// If there is no such file: every path composed here is read when `build.rs` validates
/// [`all`], so a missing one fails the build first.
fn fragment(path: &str) -> Part {
    Part {
        origin: format!("shaders/{path}"),
        text: crate::files::text(path)
            .unwrap_or_else(|| panic!("shaders/{path} is not a file of the crate"))
            .to_string(),
    }
}

/// The name of a module of `kernel` over `what` in `arith`.
fn module_name(kernel: &str, what: &str, arith: Arith) -> String {
    match arith {
        Arith::Portable => format!("{kernel}/{what}"),
        _ => format!("{kernel}/{what}@{}", arith.name()),
    }
}

/// The generated fragments that define field `f` in arithmetic `arith`, dependencies first:
/// the base field's module and its multiplications, then an extension's module.
pub fn field_parts(f: FieldModule, arith: Arith) -> Vec<Part> {
    let base = f.base().id();
    let mut parts = vec![
        fragment(&format!("generated/{base}.wgsl")),
        fragment(&format!("generated/{}.wgsl", mul_stem(base, arith))),
    ];
    if !f.is_prime() {
        parts.push(fragment(&format!("generated/{}.wgsl", f.id())));
    }
    parts
}

/// Functions every field module defines, with their arity (1 or 2) and whether they return
/// `bool` instead of an element.
pub const FIELD_FUNCTIONS: &[(&str, u8, bool)] = &[
    ("add", 2, false),
    ("sub", 2, false),
    ("neg", 1, false),
    ("double", 1, false),
    ("mul", 2, false),
    ("square", 1, false),
    ("to_mont", 1, false),
    ("from_mont", 1, false),
    ("is_zero", 1, true),
    ("eq", 2, true),
];

/// Functions of the redundant range `[0, 2p)` in the scalar fields' lazy modules, with their
/// arity; docs/limbs.md gives their contracts.
pub const LAZY_FUNCTIONS: &[(&str, u8)] = &[
    ("mul_lazy", 2),
    ("add_lazy", 2),
    ("sub_lazy", 2),
    ("sub_wide", 2),
    ("reduce", 1),
];

/// Binds `Fe`, `FE_WORDS`, `fe_from_words`, `fe_to_words` and `fe_<op>` to field `f`.
pub fn field_shim(f: FieldModule) -> Part {
    let (pre, ty) = f.prefix_and_type();
    let w = f.words();
    let mut s = format!("alias Fe = {ty};\nconst FE_WORDS: u32 = {w}u;\n");
    match f {
        FieldModule::Bls12_381Fq2 | FieldModule::Bls12_377Fq2 | FieldModule::Bn254Fq2 => {
            let h = w / 2;
            s.push_str(&format!(
                "fn fe_from_words(w: array<u32, {w}>) -> Fe {{\n    var r: Fe;\n    for (var i = 0u; i < {h}u; i++) {{\n        r.c0[i] = w[i];\n        r.c1[i] = w[i + {h}u];\n    }}\n    return r;\n}}\n"
            ));
            s.push_str(&format!(
                "fn fe_to_words(x: Fe) -> array<u32, {w}> {{\n    var w: array<u32, {w}>;\n    for (var i = 0u; i < {h}u; i++) {{\n        w[i] = x.c0[i];\n        w[i + {h}u] = x.c1[i];\n    }}\n    return w;\n}}\n"
            ));
        }
        _ => {
            let pw = f.packed_words();
            let p_words: Vec<String> = f.modulus_words().iter().map(|x| format!("{x}u")).collect();
            s.push_str(&format!(
                "// p in FE_PACKED little-endian 32-bit words (the curve VM's packed ADD/SUB).\nconst FE_P_PACKED = array<u32, {pw}>({});\n",
                p_words.join(", ")
            ));
            s.push_str(&format!(
                "const FE_PACKED: u32 = {pw}u;\nconst FE_PACK_SHIFT: u32 = {}u;\nfn fe_unpack(w: array<u32, {pw}>) -> Fe {{\n    return {pre}_unpack(w);\n}}\nfn fe_pack(x: Fe) -> array<u32, {pw}> {{\n    return {pre}_pack(x);\n}}\n",
                13 * w - 32 * pw
            ));
            s.push_str(&format!(
                "fn fe_mul_packed(a: array<u32, {pw}>, b: array<u32, {pw}>) -> array<u32, {pw}> {{\n    return {pre}_mul_packed(a, b);\n}}\n"
            ));
            s.push_str(&format!(
                "fn fe_from_words(w: array<u32, {w}>) -> Fe {{\n    return w;\n}}\n"
            ));
            s.push_str(&format!(
                "fn fe_to_words(x: Fe) -> array<u32, {w}> {{\n    return x;\n}}\n"
            ));
        }
    }
    s.push_str(&format!(
        "fn fe_zero() -> Fe {{\n    return {pre}_zero();\n}}\n"
    ));
    s.push_str(&format!(
        "fn fe_one() -> Fe {{\n    return {pre}_one();\n}}\n"
    ));
    for (op, arity, boolean) in FIELD_FUNCTIONS {
        let ret = if *boolean { "bool" } else { "Fe" };
        let (params, args) = if *arity == 1 {
            ("a: Fe", "a")
        } else {
            ("a: Fe, b: Fe", "a, b")
        };
        s.push_str(&format!(
            "fn fe_{op}({params}) -> {ret} {{\n    return {pre}_{op}({args});\n}}\n"
        ));
    }
    Part {
        origin: format!("<fe shim for {}>", f.id()),
        text: s,
    }
}

/// The elementwise field kernels (`shaders/kernels/field_ops.wgsl`) over field `f` in
/// arithmetic `arith`.
pub fn field_ops(f: FieldModule, arith: Arith) -> Composed {
    over_field(f, arith, "field_ops", fragment("kernels/field_ops.wgsl"))
}

/// The standalone generated field modules (no entry points), in arithmetic `arith`.
pub fn field_library(f: FieldModule, arith: Arith) -> Composed {
    Composed {
        name: module_name("field", f.id(), arith),
        parts: field_parts(f, arith),
        arith,
    }
}

/// The curve VM (`shaders/kernels/curve_vm.wgsl`) for group `c` in arithmetic `arith`.
pub fn curve_vm(c: Group, arith: Arith) -> Composed {
    curve_vm_fq2(c, arith, c.vm_fq2_ops(arith))
}

/// [`curve_vm`] with the VM's Karatsuba instructions compiled in or not, whatever
/// [`Group::vm_fq2_ops`] chooses for `arith` (a program's `fq2_ops` says which it needs):
/// tests run them on adapters without the f64 arithmetic. A module that differs from the
/// choice is named with `+fq2` or `-fq2` after it.
pub fn curve_vm_fq2(c: Group, arith: Arith, fq2_ops: bool) -> Composed {
    let mut name = module_name("curve_vm", c.id(), arith);
    if fq2_ops != c.vm_fq2_ops(arith) {
        name.push_str(if fq2_ops { "+fq2" } else { "-fq2" });
    }
    Composed {
        name,
        parts: vm_parts(c, arith, fq2_ops, vec![fragment("kernels/curve_vm.wgsl")]),
        arith,
    }
}

/// The base field in `arith`, its shim, `VM_REGS`, `AFFINE_REGS`, `PREFETCH_POINT`, the VM
/// core and its multiplication step (with the Fq2 product `KMUL` where `fq2_ops`), followed
/// by `kernel`'s parts.
fn vm_parts(c: Group, arith: Arith, fq2_ops: bool, kernel: Vec<Part>) -> Vec<Part> {
    let f = c.field();
    let mut parts = field_parts(f, arith);
    parts.push(field_shim(f));
    parts.push(Part {
        origin: format!("<vm registers for {}>", c.id()),
        text: format!(
            "const VM_REGS: u32 = {}u;\n\
             const AFFINE_REGS: u32 = {}u;\nconst PREFETCH_POINT: bool = {};\n",
            c.vm_regs(),
            c.affine_regs(),
            c.prefetch_point()
        ),
    });
    parts.push(fragment("kernels/curve_vm_core.wgsl"));
    parts.push(fragment(if fq2_ops {
        "kernels/curve_vm_kmul.wgsl"
    } else {
        "kernels/curve_vm_mul.wgsl"
    }));
    parts.extend(kernel);
    parts
}

/// MSM bucket accumulation (`shaders/kernels/msm_accumulate.wgsl`) for group `c` in
/// arithmetic `arith`.
pub fn msm_accumulate(c: Group, arith: Arith) -> Composed {
    Composed {
        name: module_name("msm_accumulate", c.id(), arith),
        parts: vm_parts(
            c,
            arith,
            c.vm_fq2_ops(arith),
            vec![
                fragment("kernels/msm_layout.wgsl"),
                fragment("kernels/msm_bases.wgsl"),
                fragment("kernels/msm_accumulate.wgsl"),
            ],
        ),
        arith,
    }
}

/// [`msm_accumulate`] reading its bases from two bindings (`shaders/kernels/
/// msm_bases_split.wgsl`): one MSM over two parts of the bases. Only its
/// `msm_bucket_accumulate` is used.
pub fn msm_accumulate_split(c: Group, arith: Arith) -> Composed {
    Composed {
        name: module_name("msm_accumulate", &format!("{}/split", c.id()), arith),
        parts: vm_parts(
            c,
            arith,
            c.vm_fq2_ops(arith),
            vec![
                fragment("kernels/msm_layout.wgsl"),
                fragment("kernels/msm_bases_split.wgsl"),
                fragment("kernels/msm_accumulate.wgsl"),
            ],
        ),
        arith,
    }
}

/// MSM bucket assignment (`shaders/kernels/msm_buckets.wgsl`): field-independent, no
/// multiplication.
pub fn msm_buckets() -> Composed {
    Composed {
        name: "msm_buckets".into(),
        parts: vec![
            fragment("kernels/msm_layout.wgsl"),
            fragment("kernels/msm_digits.wgsl"),
            fragment("kernels/msm_buckets.wgsl"),
        ],
        arith: Arith::Portable,
    }
}

/// The lazy module of scalar field `f`, its portable `mul_lazy`, and `fe_<op>` for its
/// [`LAZY_FUNCTIONS`].
fn lazy_parts(f: FieldModule) -> Vec<Part> {
    let (pre, _) = f.prefix_and_type();
    let mut s = String::new();
    for (op, arity) in LAZY_FUNCTIONS {
        let (params, args) = if *arity == 1 {
            ("a: Fe", "a")
        } else {
            ("a: Fe, b: Fe", "a, b")
        };
        s.push_str(&format!(
            "fn fe_{op}({params}) -> Fe {{\n    return {pre}_{op}({args});\n}}\n"
        ));
    }
    vec![
        fragment(&format!("generated/{}_lazy.wgsl", f.id())),
        fragment(&format!("generated/{}.wgsl", lazy_mul_stem(f.id()))),
        Part {
            origin: format!("<lazy fe shim for {}>", f.id()),
            text: s,
        },
    ]
}

/// A kernel over the field `f` alone: the field in `arith`, its shim (`Fe`, `FE_WORDS`,
/// `fe_*`), then `kernel`; named `name/<field>` (`@<arith>` after a wide one).
fn over_field(f: FieldModule, arith: Arith, name: &str, kernel: Part) -> Composed {
    let mut parts = field_parts(f, arith);
    parts.push(field_shim(f));
    parts.push(kernel);
    Composed {
        name: module_name(name, f.id(), arith),
        parts,
        arith,
    }
}

/// MSM digits of scalars in arkworks' Montgomery form, converted in registers
/// (`shaders/kernels/msm_digits.wgsl`, then `shaders/kernels/msm_scalars.wgsl`), over the
/// scalar field `f` (an `Fr`: 8-word packed elements) in `arith`.
pub fn msm_scalars(f: FieldModule, arith: Arith) -> Composed {
    let mut m = over_field(
        f,
        arith,
        "msm_scalars",
        fragment("kernels/msm_scalars.wgsl"),
    );
    let kernel = m.parts.len() - 1;
    m.parts.insert(kernel, fragment("kernels/msm_digits.wgsl"));
    m
}

/// Radix-2^k NTT passes (`shaders/kernels/ntt.wgsl`) over the scalar field `f` (`Fr` only: the
/// kernel moves 8-word packed elements) in `arith`.
///
/// The kernel is written against the element form `Nt` (docs/ntt.md, "The element form"): in
/// the portable arithmetic the field's 13-bit limbs and their tile of 16-bit halves (the
/// field, its shim, the lazy module, then `shaders/kernels/ntt_tile.wgsl`); in a 64-bit one
/// its native limbs, whose generated file (`<field>_native_<arith>.wgsl`) is all the module
/// needs besides the kernel: no field module, so naga and the driver read a third of the text.
pub fn ntt(f: FieldModule, arith: Arith) -> Composed {
    let kernel = fragment("kernels/ntt.wgsl");
    let layout = f
        .known()
        .and_then(|k| zkgpu_limbs::WideLayout::new(arith, &k.params()));
    let Some(layout) = layout else {
        let mut m = over_field(f, arith, "ntt", kernel);
        let at = m.parts.len() - 1;
        let mut parts = lazy_parts(f);
        parts.push(fragment("kernels/ntt_tile.wgsl"));
        parts.push(ntt_tile(f, arith, f.words() as usize / 2, true));
        m.parts.splice(at..at, parts);
        return m;
    };
    let words = zkgpu_limbs::native_words(&layout);
    Composed {
        name: module_name("ntt", f.id(), arith),
        parts: vec![
            fragment(&format!("generated/{}.wgsl", native_stem(f.id(), arith))),
            native_form(f, &layout),
            ntt_tile(f, arith, words, false),
            kernel,
        ],
        arith,
    }
}

/// Elements of the NTT's workgroup tile (`NTT_TILE` in shaders/kernels/ntt.wgsl, which the
/// tile's `const_assert` checks).
const NTT_TILE: usize = 256;

/// Words of one plane of the tile: a word of padding after every 32 elements, so that the
/// scatter's bit-reversed reads (elements 2^(k-5) apart across a warp) fall in 32 banks, not
/// in as few as 4 (docs/ntt.md, "The passes").
const NTT_PLANE: usize = NTT_TILE + NTT_TILE / 32;

/// A 64-bit arithmetic's element form for the NTT: `Nt` as its native limbs, `nt_*` bound to
/// the generated `<prefix>_n_*` (the portable form's is shaders/kernels/ntt_tile.wgsl).
fn native_form(f: FieldModule, layout: &zkgpu_limbs::WideLayout) -> Part {
    let (pre, _) = f.prefix_and_type();
    let words = zkgpu_limbs::native_words(layout);
    let mut s = format!(
        "alias Nt = array<u32, {words}>;\n\
         fn nt_unpack(w: array<u32, 8>) -> Nt {{\n    return {pre}_n_unpack(w);\n}}\n\
         fn nt_pack(x: Nt) -> array<u32, 8> {{\n    return {pre}_n_pack(x);\n}}\n"
    );
    for (op, arity) in LAZY_FUNCTIONS {
        let (params, args) = if *arity == 1 {
            ("a: Nt", "a")
        } else {
            ("a: Nt, b: Nt", "a, b")
        };
        s.push_str(&format!(
            "fn nt_{op}({params}) -> Nt {{\n    return {pre}_n_{op}({args});\n}}\n"
        ));
    }
    Part {
        origin: format!("<ntt native form for {}@{}>", f.id(), layout.arith.name()),
        text: s,
    }
}

/// The NTT's workgroup tile of [`NTT_TILE`] elements (checked against the kernel's, so that
/// the two cannot part) and `tile_get` / `tile_set`: one plane of [`NTT_PLANE`] words per
/// word of the element, element `e` at `e + e / 32` of each. `halves`: the portable form,
/// whose 13-bit limbs are kept two to a word as 16-bit halves (a limb is one mask or shift
/// away; the 8-word packed form cost a repacking per access, which made the butterflies twice
/// as slow on the H100, docs/log/2026-11.md); else the native form's own words.
fn ntt_tile(f: FieldModule, arith: Arith, words: usize, halves: bool) -> Part {
    let ty = if halves { "Fe" } else { "Nt" };
    let word = |i: usize| format!("tile[{}u + a]", NTT_PLANE * i);
    // Each word read once (a half is a mask or a shift of it).
    let reads: String = (0..words)
        .map(|i| format!("    let w{i} = {};\n", word(i)))
        .collect();
    let get: Vec<String> = (0..words)
        .map(|i| match halves {
            true => format!("w{i} & 8191u, w{i} >> 16u"),
            false => format!("w{i}"),
        })
        .collect();
    let set: String = (0..words)
        .map(|i| match halves {
            true => format!(
                "    {} = x[{}] | (x[{}] << 16u);\n",
                word(i),
                2 * i,
                2 * i + 1
            ),
            false => format!("    {} = x[{i}];\n", word(i)),
        })
        .collect();
    Part {
        origin: format!("<ntt tile for {}@{}>", f.id(), arith.name()),
        text: format!(
            "const_assert NTT_TILE == {NTT_TILE}u;\n\
             var<workgroup> tile: array<u32, {}>;\n\
             fn tile_get(e: u32) -> {ty} {{\n    let a = e + (e >> 5u);\n{reads}    return {ty}({});\n}}\n\
             fn tile_set(e: u32, x: {ty}) {{\n    let a = e + (e >> 5u);\n{set}}}\n",
            NTT_PLANE * words,
            get.join(", ")
        ),
    }
}

/// Elementwise kernels of the witness map (`shaders/kernels/ntt_elementwise.wgsl`) over `f`
/// in `arith`.
pub fn ntt_elementwise(f: FieldModule, arith: Arith) -> Composed {
    over_field(
        f,
        arith,
        "ntt_elementwise",
        fragment("kernels/ntt_elementwise.wgsl"),
    )
}

/// The scalar fields the NTT supports: the pairings' ([`Pairing::scalar_field`]).
pub fn ntt_fields() -> Vec<FieldModule> {
    Pairing::ALL.iter().map(|p| p.scalar_field()).collect()
}

/// The known-answer check and rate probe of arithmetic `arith` over the prime field `f`
/// (`shaders/kernels/arith_check.wgsl`; for `f64` also `arith_check_f64.wgsl`, whether `fma`
/// is fused): also the `arith field` benchmark's chains over packed words.
pub fn arith_check(f: FieldModule, arith: Arith) -> Composed {
    let mut m = over_field(
        f,
        arith,
        "arith_check",
        fragment("kernels/arith_check.wgsl"),
    );
    if arith == Arith::F64 {
        m.parts.push(fragment("kernels/arith_check_f64.wgsl"));
    }
    m
}

/// The field the arithmetics are checked and their rates measured on: the MSM's heaviest.
pub const ARITH_CHECK_FIELD: FieldModule = FieldModule::Bls12_381Fq;

/// Every shipped module, in every arithmetic: what `build.rs` validates.
pub fn all() -> Vec<Composed> {
    let mut v = vec![msm_buckets()];
    for arith in Arith::ALL {
        v.extend(FieldModule::ALL.iter().map(|&f| field_library(f, arith)));
        v.extend(FieldModule::ALL.iter().map(|&f| field_ops(f, arith)));
        v.extend(Group::ALL.iter().map(|&c| curve_vm(c, arith)));
        v.extend(
            Group::ALL
                .iter()
                .filter_map(|c| c.scalar_field())
                .map(|f| msm_scalars(f, arith)),
        );
        v.extend(Group::ALL.iter().map(|&c| msm_accumulate(c, arith)));
        v.extend(Group::ALL.iter().map(|&c| msm_accumulate_split(c, arith)));
        v.extend(ntt_fields().into_iter().map(|f| ntt(f, arith)));
        v.extend(ntt_fields().into_iter().map(|f| ntt_elementwise(f, arith)));
        v.extend(
            FieldModule::ALL
                .iter()
                .filter(|f| f.is_prime())
                .map(|&f| arith_check(f, arith)),
        );
    }
    // A scalar field shared by several groups is composed once.
    let mut seen = std::collections::HashSet::new();
    v.retain(|m| seen.insert(m.name.clone()));
    v
}
