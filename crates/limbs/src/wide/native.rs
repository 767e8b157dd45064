//! The native form of a 64-bit arithmetic (docs/limbs.md, "The native form"): an element as
//! the arithmetic's own limbs (`w` bits each, normalized), one `u32` word a limb when
//! `w <= 32`, else a low word and a high word. Kernels that run many additions between
//! multiplications (the NTT's butterflies) keep elements in it from load to store, so a
//! multiplication neither converts its operands from 13-bit limbs nor its result back, and
//! an addition carries over `k` limbs instead of `n` 13-bit ones. The value is the same
//! Montgomery form `a R mod p` as every other layout; only the digits differ.
//!
//! The functions are those of the lazy module (docs/limbs.md, "Lazy reduction"), with the
//! same ranges, prefixed `n_`: `n_add_lazy`, `n_sub_lazy`, `n_sub_wide`, `n_reduce`,
//! `n_mul_lazy`, and `n_unpack` / `n_pack` to and from arkworks' packed words.

use super::bits::{Piece, arg_pieces, digits, field64};
use super::ir::{W, WideBuilder, WideProgram};
use super::layout::WideLayout;
use super::mont::{Finish, Form, mont_mul};

/// Words of one limb in the native form.
fn words_per_limb(l: &WideLayout) -> usize {
    if l.limb_bits > 32 { 2 } else { 1 }
}

/// Words of an element in the native form of `l`.
pub fn native_words(l: &WideLayout) -> usize {
    l.limbs * words_per_limb(l)
}

/// The WGSL type of a native element.
fn native_type(l: &WideLayout) -> String {
    format!("array<u32, {}>", native_words(l))
}

/// The pieces of native-form argument `arg`, the integer shifted up by `shift` bits.
pub(crate) fn native_pieces(arg: u8, l: &WideLayout, shift: u32) -> Vec<Piece> {
    let w = l.limb_bits;
    let mut v = Vec::with_capacity(native_words(l));
    for i in 0..l.limbs {
        let at = i64::from(shift) + i64::from(w) * i as i64;
        if words_per_limb(l) == 1 {
            v.push(Piece {
                e: W::Arg(arg, i as u16),
                at,
                width: w,
            });
        } else {
            v.push(Piece {
                e: W::Arg(arg, 2 * i as u16),
                at,
                width: 32,
            });
            v.push(Piece {
                e: W::Arg(arg, 2 * i as u16 + 1),
                at: at + 32,
                width: w - 32,
            });
        }
    }
    v
}

/// The words of a native element from its normalized `u64` limbs.
pub(crate) fn native_result(limbs: &[W], l: &WideLayout) -> Vec<W> {
    let mut v = Vec::with_capacity(native_words(l));
    for r in limbs {
        v.push(W::lo32(r.clone()));
        if words_per_limb(l) == 2 {
            v.push(W::lo32(W::shr64(r.clone(), 32)));
        }
    }
    v
}

/// The limbs of native argument `arg` as `u64` values.
fn limbs64(arg: u8, l: &WideLayout) -> Vec<W> {
    (0..l.limbs)
        .map(|i| {
            if words_per_limb(l) == 1 {
                W::widen(W::Arg(arg, i as u16))
            } else {
                W::or64(
                    W::shl64(W::widen(W::Arg(arg, 2 * i as u16 + 1)), 32),
                    W::widen(W::Arg(arg, 2 * i as u16)),
                )
            }
        })
        .collect()
}

/// `c` (an integer below `2^(w k)`, given as a multiple of `p`) in `w`-bit limbs.
fn const_limbs(l: &WideLayout, times_p: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(l.limbs);
    let mut carry: u128 = 0;
    for &pi in &l.p {
        let v = u128::from(pi) * u128::from(times_p) + carry;
        out.push((v & u128::from(l.mask())) as u64);
        carry = v >> l.limb_bits;
    }
    debug_assert_eq!(carry, 0, "the constant fits the limbs");
    out
}

/// One signed carry chain: `terms[i]` (exact values, possibly negative) plus the previous
/// limb's carry, each limb masked to `w` bits. Returns the limbs and the final carry (the
/// value's multiple of `2^(w k)`: 0 or -1 where the caller's range says so).
fn chain(b: &mut WideBuilder, stem: &str, terms: Vec<W>, l: &WideLayout) -> (Vec<W>, W) {
    let mut carry: Option<W> = None;
    let mut limbs = Vec::with_capacity(terms.len());
    for (i, t) in terms.into_iter().enumerate() {
        let v = match carry {
            None => t,
            Some(c) => W::add64(t, c),
        };
        let v = b.bind(format!("{stem}{i}"), v);
        carry = Some(b.bind(format!("{stem}c{i}"), W::sar64(v.clone(), l.limb_bits)));
        limbs.push(b.bind(format!("{stem}l{i}"), W::and64(v, l.mask())));
    }
    (limbs, carry.expect("at least one limb"))
}

/// `a + b + k` (or `a - b + k` where `b`'s flag says subtract, `a + k` without `b`) limb by
/// limb, `k` given by its limbs' exact values.
fn terms(a: &[W], b: Option<(&[W], bool)>, k: &[i128]) -> Vec<W> {
    a.iter()
        .enumerate()
        .map(|(i, ai)| {
            let mut t = ai.clone();
            if let Some((b, subtract)) = b {
                t = if subtract {
                    W::sub64(t, b[i].clone())
                } else {
                    W::add64(t, b[i].clone())
                };
            }
            match k[i] {
                0 => t,
                x if x > 0 => W::add64(t, W::I64(x)),
                x => W::sub64(t, W::I64(-x)),
            }
        })
        .collect()
}

/// A value `v - c` in `[-c, c)` given by its chain, made `v mod c`-like: where the chain's
/// final carry is -1, `c` is added back by a second chain (each limb's constant selected).
fn add_back(b: &mut WideBuilder, limbs: &[W], carry: W, c: &[u64], l: &WideLayout) -> Vec<W> {
    // carry + 1: 1 where the value was not negative, 0 where `c` is to be added.
    let kept = b.bind("kept", W::lo32(W::add64(carry, W::I64(1))));
    let back: Vec<W> = limbs
        .iter()
        .zip(c)
        .map(|(x, &ci)| {
            W::add64(
                x.clone(),
                W::select(kept.clone(), W::I64(0), W::I64(ci.into())),
            )
        })
        .collect();
    chain(b, "u", back, l).0
}

/// The program `name` over `args` native arguments returning a native element from `body`.
fn program(
    l: &WideLayout,
    name: &str,
    doc: &str,
    args: usize,
    body: impl FnOnce(&mut WideBuilder, &[Vec<W>]) -> Vec<W>,
) -> WideProgram {
    let ty = native_type(l);
    let mut b = WideBuilder::new(name, doc, vec![native_words(l); args], &ty);
    let inputs: Vec<Vec<W>> = (0..args as u8).map(|k| limbs64(k, l)).collect();
    let r = body(&mut b, &inputs);
    b.finish(native_result(&r, l), &ty)
}

/// The native form's programs of the field of `l` (see the module doc).
pub(crate) fn native_programs(l: &WideLayout) -> Vec<WideProgram> {
    let p = const_limbs(l, 1);
    let p2 = const_limbs(l, 2);
    let neg = |c: &[u64]| c.iter().map(|&x| -i128::from(x)).collect::<Vec<_>>();
    let pos = |c: &[u64]| c.iter().map(|&x| i128::from(x)).collect::<Vec<_>>();
    let zero = vec![0i128; l.limbs];
    let form = format!("{} x {}-bit limbs, normalized", l.limbs, l.limb_bits);
    let mut v = vec![unpack(l), pack(l)];
    v.push(program(
        l,
        "n_add_lazy",
        &format!("a + b, 2p subtracted when reached (a, b < 2p; {form})"),
        2,
        |b, x| {
            let (limbs, carry) = chain(b, "t", terms(&x[0], Some((&x[1], false)), &neg(&p2)), l);
            add_back(b, &limbs, carry, &p2, l)
        },
    ));
    v.push(program(
        l,
        "n_sub_lazy",
        &format!("a - b, 2p added on a borrow (a, b < 2p; {form})"),
        2,
        |b, x| {
            let (limbs, carry) = chain(b, "t", terms(&x[0], Some((&x[1], true)), &zero), l);
            add_back(b, &limbs, carry, &p2, l)
        },
    ));
    v.push(program(
        l,
        "n_sub_wide",
        &format!("exactly a - b + 2p, in (0, 4p) (a, b < 2p; {form})"),
        2,
        |b, x| chain(b, "t", terms(&x[0], Some((&x[1], true)), &pos(&p2)), l).0,
    ));
    v.push(program(
        l,
        "n_reduce",
        &format!("a mod p (a < 2p; {form})"),
        1,
        |b, x| {
            let (limbs, carry) = chain(b, "t", terms(&x[0], None, &neg(&p)), l);
            add_back(b, &limbs, carry, &p, l)
        },
    ));
    v.push(mont_mul(l, "n_mul_lazy", Form::Native, Finish::Lazy));
    v
}

/// `n_unpack`: arkworks' packed words to the native form.
fn unpack(l: &WideLayout) -> WideProgram {
    let packed = format!("array<u32, {}>", l.words);
    let mut b = WideBuilder::new(
        "n_unpack",
        "packed words (a value below 2^(32 words)) to the native form",
        vec![l.words],
        &packed,
    );
    let pieces = arg_pieces(0, l.words, 32, 0);
    let mut out = Vec::with_capacity(native_words(l));
    for i in 0..l.limbs {
        let (lo, hi) = field64(&pieces, i64::from(l.limb_bits) * i as i64, l.limb_bits);
        out.push(lo);
        out.extend(hi);
    }
    let out = out
        .into_iter()
        .enumerate()
        .map(|(i, e)| b.bind(format!("w{i}"), e))
        .collect();
    b.finish(out, &native_type(l))
}

/// `n_pack`: the native form to packed words (a value below `2^(32 words)`).
fn pack(l: &WideLayout) -> WideProgram {
    let ty = native_type(l);
    let mut b = WideBuilder::new(
        "n_pack",
        "the native form to packed words (a value below 2^(32 words))",
        vec![native_words(l)],
        &ty,
    );
    let out = digits(&native_pieces(0, l, 0), l.words, 32);
    let out = out
        .into_iter()
        .enumerate()
        .map(|(i, e)| b.bind(format!("w{i}"), e))
        .collect();
    b.finish(out, &format!("array<u32, {}>", l.words))
}
