//! The NTT's modules: the pass (`shaders/kernels/ntt.wgsl`) in each arithmetic's element form
//! and tile size, and the witness map's elementwise kernels.
//!
//! Compiled into the library and into `build.rs`, like `compose.rs`.

use crate::compose::{
    Composed, LAZY_FUNCTIONS, Part, fragment, lazy_parts, module_name, over_field,
};
use crate::field::FieldModule;
use crate::pairing::Pairing;
use zkgpu_limbs::Arith;
use zkgpu_limbs::wgsl::native_stem;

/// The workgroup tile a pass module is composed with: `2^log` elements, transformed by `wg`
/// invocations (each takes `2^log / (2 wg)` butterflies of a stage and `2^log / wg` elements
/// of the gather and scatter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NttTile {
    /// log2 of the tile's elements: the most bits one pass transforms.
    pub log: u32,
    /// Invocations of a workgroup.
    pub wg: u32,
}

impl NttTile {
    /// 256 elements, 128 invocations: 10.3 KiB of workgroup memory, within WebGPU's default
    /// 16 KiB; every adapter runs it.
    pub const SMALL: NttTile = NttTile { log: 8, wg: 128 };

    /// The tiles a pass can be composed with, smallest first: 256, 512 and 1024 elements
    /// (the larger need more workgroup memory than WebGPU's default). The small tile gives
    /// each invocation one butterfly of a stage, the larger two (so that lavapipe, whose 32
    /// KiB hold the 512-element tile but not the 1024-element one, runs that path too).
    pub const ALL: [NttTile; 3] = [
        NttTile::SMALL,
        NttTile { log: 9, wg: 128 },
        NttTile { log: 10, wg: 256 },
    ];

    /// The tile of `2^log` elements, if there is one.
    pub fn of_log(log: u32) -> Option<NttTile> {
        Self::ALL.into_iter().find(|t| t.log == log)
    }

    /// Elements of the tile.
    pub fn elements(self) -> u32 {
        1 << self.log
    }

    /// Words of one plane: a word of padding after every 32 elements, so that the
    /// scatter's bit-reversed reads (elements 2^(k-5) apart across a warp) fall in 32 banks,
    /// not as few as 4 (docs/ntt.md, "The passes").
    fn plane(self) -> u32 {
        self.elements() + self.elements() / 32
    }

    /// Bytes of workgroup memory the pass over `f` in `arith` holds with this tile.
    pub fn workgroup_bytes(self, f: FieldModule, arith: Arith) -> u64 {
        u64::from(self.plane()) * tile_words(f, arith) as u64 * 4
    }
}

/// Words of the tile per element: the portable form's 13-bit limbs as 16-bit halves, or a
/// 64-bit arithmetic's native words.
fn tile_words(f: FieldModule, arith: Arith) -> usize {
    match native_layout(f, arith) {
        Some(layout) => zkgpu_limbs::native_words(&layout),
        None => (f.words() as usize).div_ceil(2),
    }
}

fn native_layout(f: FieldModule, arith: Arith) -> Option<zkgpu_limbs::WideLayout> {
    f.known()
        .and_then(|k| zkgpu_limbs::WideLayout::new(arith, &k.params()))
}

/// Radix-2^k NTT passes (`shaders/kernels/ntt.wgsl`) over the scalar field `f` (`Fr` only: the
/// kernel moves 8-word packed elements) in `arith`, with the 256-element tile
/// ([`NttTile::SMALL`]).
pub fn ntt(f: FieldModule, arith: Arith) -> Composed {
    ntt_tiled(f, arith, NttTile::SMALL)
}

/// [`ntt`] with the workgroup tile `tile`, named `ntt/<field>[@arith]` for the small tile
/// and `.../tile<elements>` for another.
///
/// The kernel is written against the element form `Nt` (docs/ntt.md, "The element form"): in
/// the portable arithmetic the field's 13-bit limbs and their tile of 16-bit halves (the
/// field, its shim, the lazy module, then `shaders/kernels/ntt_tile.wgsl`); in a 64-bit one
/// its native limbs, whose generated file (`<field>_native_<arith>.wgsl`) is all the module
/// needs besides the kernel: no field module, so naga and the driver read a third of the text.
pub fn ntt_tiled(f: FieldModule, arith: Arith, tile: NttTile) -> Composed {
    let kernel = fragment("kernels/ntt.wgsl");
    let mut m = match native_layout(f, arith) {
        None => {
            let mut m = over_field(f, arith, "ntt", kernel);
            let at = m.parts.len() - 1;
            let mut parts = lazy_parts(f);
            parts.push(fragment("kernels/ntt_tile.wgsl"));
            parts.push(tile_part(f, arith, tile));
            m.parts.splice(at..at, parts);
            m
        }
        Some(layout) => Composed {
            name: module_name("ntt", f.id(), arith),
            parts: vec![
                fragment(&format!("generated/{}.wgsl", native_stem(f.id(), arith))),
                native_form(f, &layout),
                tile_part(f, arith, tile),
                kernel,
            ],
            arith,
        },
    };
    if tile != NttTile::SMALL {
        m.name = format!("{}/tile{}", m.name, tile.elements());
    }
    m
}

/// A 64-bit arithmetic's element form for the NTT: `Nt` as its native limbs, `nt_*` bound to
/// the generated `<prefix>_n_*`.
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

/// The tile's sizes (`NTT_TILE`, `NTT_WG`), its workgroup memory and `tile_get`/`tile_set`:
/// one plane of words per word of the element form, padded ([`NttTile::plane`]), element `e`
/// at `e + e / 32` of each plane. The portable form keeps its 20 limbs of 13 bits as 10 words
/// of two 16-bit halves (a limb is one mask or shift away; the 8-word packed form cost a
/// repacking per access, which made the butterflies twice as slow on the H100,
/// docs/log/2026-11.md); a native form keeps its own words.
fn tile_part(f: FieldModule, arith: Arith, tile: NttTile) -> Part {
    let words = tile_words(f, arith);
    let plane = tile.plane() as usize;
    let portable = native_layout(f, arith).is_none();
    let mut s = format!(
        "const NTT_TILE: u32 = {}u;\nconst NTT_WG: u32 = {}u;\n\
         var<workgroup> tile: array<u32, {}>;\n",
        tile.elements(),
        tile.wg,
        plane * words
    );
    let get = (0..words).map(|i| {
        let w = format!("tile[{}u + a]", plane * i);
        if portable {
            format!("{w} & 8191u, {w} >> 16u")
        } else {
            w
        }
    });
    let (ty, get) = if portable {
        ("Fe", get.collect::<Vec<_>>().join(", "))
    } else {
        ("Nt", get.collect::<Vec<_>>().join(", "))
    };
    s.push_str(&format!(
        "fn tile_get(e: u32) -> {ty} {{\n    let a = e + (e >> 5u);\n    return {ty}({get});\n}}\n"
    ));
    let set: String = (0..words)
        .map(|i| {
            let v = if portable {
                format!("x[{}] | (x[{}] << 16u)", 2 * i, 2 * i + 1)
            } else {
                format!("x[{i}]")
            };
            format!("    tile[{}u + a] = {v};\n", plane * i)
        })
        .collect();
    s.push_str(&format!(
        "fn tile_set(e: u32, x: {ty}) {{\n    let a = e + (e >> 5u);\n{set}}}\n"
    ));
    Part {
        origin: format!(
            "<ntt tile of {} for {}@{}>",
            tile.elements(),
            f.id(),
            arith.name()
        ),
        text: s,
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
