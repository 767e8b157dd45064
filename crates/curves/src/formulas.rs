//! Curve formulas as VM programs (see [`crate::vm`]).
//!
//! Register layout shared by every program of a group, in coordinate-field elements ("slots";
//! one register each over a prime field, two over Fq2):
//! - slots 0-3: the accumulator (`X, Y, ZZ, ZZZ` in XYZZ, or `X, Y, T, Z` in extended
//!   twisted Edwards coordinates);
//! - slots 4-5: an affine input `(x, y)` for `madd` (slots 4-6 `(y - x, y + x, 2d x y)` on
//!   twisted Edwards curves), or slots 4-7 a second accumulator-form input for `add`;
//! - slots 8 and up: temporaries; over Fq2, four scratch registers after them.
//!
//! Entry points: `identity` (slots 0-3 = the identity), `madd` (slots 0-3 += the affine
//! input), `add` (slots 0-3 += slots 4-7), `dbl` (slots 0-3 = 2 slots 0-3), `to_affine` (the
//! affine input's slots = slots 0-3 in affine form, arkworks' identity encoding included; slots 0-3 are kept).
//! Each handles every special case: identities, `P + P`, `P + (-P)`.

use ark_ff::Field;

use crate::vm::{Asm, Label, Program, Reg};

/// A coordinate-field element in VM registers: `c[0]` alone over a prime field, `c[0], c[1]`
/// over Fq2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct El {
    c: [Reg; 2],
}

/// Assembles coordinate-field arithmetic over base-field registers.
#[derive(Debug)]
pub struct ElAsm<F> {
    /// The base-field program being built.
    pub asm: Asm<F>,
    /// 1 (prime field) or 2 (Fq2 = Fq[u]/(u^2 + k)).
    degree: u8,
    /// `k = -beta` for Fq2.
    k: u32,
    /// Whether Fq2 products are the VM's `KMUL` ([`ElAsm::with_fq2_ops`]).
    fq2_ops: bool,
    scratch: [Reg; 4],
}

/// The number of coordinate slots programs use (accumulator, input, temporaries).
pub const SLOTS: u8 = 18;

impl<F: Field> ElAsm<F> {
    /// A builder over a prime field (`degree` 1) or Fq2 with `u^2 = -k` (`degree` 2).
    pub fn new(degree: u8, k: u32) -> Self {
        let first_scratch = SLOTS * degree;
        Self {
            asm: Asm::new(),
            degree,
            k,
            fq2_ops: false,
            scratch: [0, 1, 2, 3].map(|i| Reg(first_scratch + i)),
        }
    }

    /// Assembles each Fq2 product as the VM's Karatsuba instruction `KMUL` (one instruction
    /// instead of eight) where `on` is true, for modules composed with it
    /// (`zkgpu_shaders::Group::vm_fq2_ops`).
    ///
    /// # Panics
    /// If `on` and the field is not `Fq2 = Fq[u]/(u^2 + 1)` (`KMUL`'s `u^2 = -1`).
    pub fn with_fq2_ops(mut self, on: bool) -> Self {
        assert!(
            !on || (self.degree == 2 && self.k == 1),
            "KMUL is over Fq[u]/(u^2 + 1)"
        );
        self.fq2_ops = on;
        self
    }

    /// Coordinate slot `i`.
    pub fn slot(&self, i: u8) -> El {
        let r = i * self.degree;
        El {
            c: [Reg(r), Reg(r + 1)],
        }
    }

    fn comps(&self) -> usize {
        self.degree as usize
    }

    /// `d = a + b`
    pub fn add(&mut self, d: El, a: El, b: El) {
        for i in 0..self.comps() {
            self.asm.add(d.c[i], a.c[i], b.c[i]);
        }
    }
    /// `d = a - b`
    pub fn sub(&mut self, d: El, a: El, b: El) {
        for i in 0..self.comps() {
            self.asm.sub(d.c[i], a.c[i], b.c[i]);
        }
    }
    /// `d = 2a`
    pub fn dbl(&mut self, d: El, a: El) {
        for i in 0..self.comps() {
            self.asm.dbl(d.c[i], a.c[i]);
        }
    }
    /// `d = a`
    pub fn copy(&mut self, d: El, a: El) {
        for i in 0..self.comps() {
            self.asm.copy(d.c[i], a.c[i]);
        }
    }
    /// `d = 0`
    pub fn zero(&mut self, d: El) {
        for i in 0..self.comps() {
            self.asm.zero(d.c[i]);
        }
    }
    /// `d = 1`
    pub fn one(&mut self, d: El) {
        self.asm.one(d.c[0]);
        if self.degree == 2 {
            self.asm.zero(d.c[1]);
        }
    }

    /// `d = c x` in the base field for a small constant `c >= 2`, by doubling and adding
    /// (`d` must differ from `x`).
    fn times(&mut self, d: Reg, x: Reg, c: u32) {
        debug_assert!(c >= 2 && d != x);
        let bits = 32 - c.leading_zeros();
        self.asm.dbl(d, x);
        if (c >> (bits - 2)) & 1 == 1 {
            self.asm.add(d, d, x);
        }
        for i in (0..bits.saturating_sub(2)).rev() {
            self.asm.dbl(d, d);
            if (c >> i) & 1 == 1 {
                self.asm.add(d, d, x);
            }
        }
    }

    /// `d = x - k y` in the base field (`k y` into scratch `s` unless `k = 1`). `d` may alias
    /// `x` or `y`.
    fn sub_times_k(&mut self, d: Reg, x: Reg, y: Reg, s: Reg) {
        if self.k == 1 {
            self.asm.sub(d, x, y);
        } else {
            self.times(s, y, self.k);
            self.asm.sub(d, x, s);
        }
    }

    /// `d = a b`. Over Fq2, Karatsuba: 3 base multiplications; `d` may alias `a` or `b` (both
    /// are read in full before `d` is written).
    pub fn mul(&mut self, d: El, a: El, b: El) {
        if self.degree == 1 {
            self.asm.mul(d.c[0], a.c[0], b.c[0]);
            return;
        }
        let [s0, s1, s2, s3] = self.scratch;
        let (a0, a1, b0, b1) = (a.c[0], a.c[1], b.c[0], b.c[1]);
        if self.fq2_ops {
            // A coordinate's registers are a pair (c[1] follows c[0]).
            self.asm.kmul(d.c[0], a0, b0);
            return;
        }
        self.asm.mul(s0, a0, b0); // v0
        self.asm.mul(s1, a1, b1); // v1
        self.asm.add(s2, a0, a1);
        self.asm.add(s3, b0, b1);
        self.asm.mul(s2, s2, s3); // (a0 + a1)(b0 + b1): the last read of a and b
        self.asm.sub(d.c[1], s2, s0);
        self.asm.sub(d.c[1], d.c[1], s1); // c1 = m - v0 - v1
        self.sub_times_k(d.c[0], s0, s1, s3); // c0 = v0 + beta v1 = v0 - k v1
    }

    /// `d = a^2`. Over Fq2, the complex method: 2 base multiplications; `d` may alias `a`.
    pub fn sqr(&mut self, d: El, a: El) {
        if self.degree == 1 {
            self.asm.mul(d.c[0], a.c[0], a.c[0]);
            return;
        }
        let [s0, s1, s2, s3] = self.scratch;
        let (a0, a1) = (a.c[0], a.c[1]);
        self.asm.mul(s0, a0, a1); // v = a0 a1
        self.asm.add(s1, a0, a1);
        self.sub_times_k(s2, a0, a1, s3); // a0 + beta a1
        // m = (a0 + a1)(a0 + beta a1) = a0^2 + beta a1^2 + (1 + beta) v; a is fully read.
        // c0 = m - v - beta v = m + (k - 1) v.
        if self.k == 1 {
            self.asm.mul(d.c[0], s1, s2);
        } else {
            self.asm.mul(s1, s1, s2);
            if self.k == 2 {
                self.asm.add(d.c[0], s1, s0);
            } else {
                self.times(s2, s0, self.k - 1);
                self.asm.add(d.c[0], s1, s2);
            }
        }
        self.asm.dbl(d.c[1], s0); // c1 = 2 v
    }

    /// Jump to `to` when `a == 0`.
    pub fn jz(&mut self, a: El, to: Label) {
        if self.degree == 1 {
            self.asm.jz(a.c[0], to);
        } else {
            let skip = self.asm.label();
            self.asm.jnz(a.c[0], skip);
            self.asm.jnz(a.c[1], skip);
            self.asm.jmp(to);
            self.asm.place(skip);
        }
    }

    /// Jump to `to` when `a != 0`.
    pub fn jnz(&mut self, a: El, to: Label) {
        self.asm.jnz(a.c[0], to);
        if self.degree == 2 {
            self.asm.jnz(a.c[1], to);
        }
    }

    /// Loads the coordinate-field constant whose components are `c`.
    pub fn load_const(&mut self, d: El, c: &[F]) {
        for (&r, &value) in d.c.iter().zip(c).take(self.comps()) {
            self.asm.load_const(r, value);
        }
    }

    /// `d = a^(p - 2)` in the base field (`a^-1`, and 0 for 0) by square-and-multiply over
    /// the bits of `p - 2`: about `log2 p` squarings and half as many multiplications, one VM
    /// instruction each (`d` must differ from `a`).
    fn pow_p_minus_2(&mut self, d: Reg, a: Reg) {
        debug_assert!(d != a);
        // p - 2 from the characteristic's little-endian u64 words (p is odd and > 2).
        let mut e = F::characteristic().to_vec();
        let mut borrow = 2u64;
        for w in &mut e {
            let (v, o) = w.overflowing_sub(borrow);
            *w = v;
            borrow = u64::from(o);
        }
        let bits: Vec<bool> = (0..64 * e.len())
            .map(|i| (e[i / 64] >> (i % 64)) & 1 == 1)
            .collect();
        let top = bits.iter().rposition(|&b| b).unwrap_or(0);
        self.asm.copy(d, a);
        for i in (0..top).rev() {
            self.asm.mul(d, d, d);
            if bits[i] {
                self.asm.mul(d, d, a);
            }
        }
    }

    /// `d = a^-1` in the coordinate field, and 0 for 0 (`d` must differ from `a`; uses the
    /// temporaries `t`). Over Fq2 through the norm: `(a0 + a1 u)^-1 = (a0 - a1 u) / (a0^2 + k
    /// a1^2)`, so one base-field exponentiation either way.
    pub fn inverse(&mut self, d: El, a: El, t: El) {
        if self.degree == 1 {
            self.pow_p_minus_2(d.c[0], a.c[0]);
            return;
        }
        let [s0, s1, ..] = self.scratch;
        let (a0, a1) = (a.c[0], a.c[1]);
        self.asm.mul(s0, a0, a0);
        self.asm.mul(s1, a1, a1);
        if self.k == 1 {
            self.asm.add(t.c[0], s0, s1);
        } else {
            self.times(t.c[0], s1, self.k);
            self.asm.add(t.c[0], s0, t.c[0]); // the norm a0^2 + k a1^2
        }
        self.pow_p_minus_2(t.c[1], t.c[0]);
        self.asm.mul(d.c[0], a0, t.c[1]);
        self.asm.mul(t.c[0], a1, t.c[1]);
        self.asm.zero(d.c[1]);
        self.asm.sub(d.c[1], d.c[1], t.c[0]);
    }
}

/// Short Weierstrass curves with `a = 0`, in XYZZ coordinates (`x = X/ZZ`, `y = Y/ZZZ`,
/// `ZZ^3 = ZZZ^2`; the identity has `ZZ = ZZZ = 0`). Formulas from the Explicit-Formulas
/// Database, "shortw-xyzz" (Bernstein, Lange): madd-2008-s, add-2008-s, dbl-2008-s-1,
/// mdbl-2008-s-1. The affine identity is arkworks' `(0, 0)`.
///
/// `fq2_ops`: Fq2 products by the VM's Karatsuba instruction `KMUL` ([`ElAsm::with_fq2_ops`]).
pub fn weierstrass_a0<F: Field>(degree: u8, k: u32, fq2_ops: bool) -> Program<F> {
    let mut e = ElAsm::<F>::new(degree, k).with_fq2_ops(fq2_ops);
    let s = |i| e.slot(i);
    let (x1, y1, zz1, zzz1) = (s(0), s(1), s(2), s(3));
    let (x2, y2, zz2, zzz2) = (s(4), s(5), s(6), s(7));
    let t: Vec<El> = (8..SLOTS).map(s).collect();

    e.asm.entry("identity");
    set_xyzz_identity(&mut e, [x1, y1, zz1, zzz1]);
    e.asm.halt();

    e.asm.entry("madd");
    emit_xyzz_madd(&mut e, [x1, y1, zz1, zzz1], [x2, y2], &t);
    e.asm.halt();

    e.asm.entry("add");
    emit_xyzz_add(&mut e, [x1, y1, zz1, zzz1], [x2, y2, zz2, zzz2], &t);
    e.asm.halt();

    // dbl-2008-s-1: 6M + 3S (the identity doubles to itself: ZZ3 = V ZZ1 = 0).
    e.asm.entry("dbl");
    emit_xyzz_dbl(&mut e, [x1, y1, zz1, zzz1], &t);
    e.asm.halt();

    // To affine, into slots 4-5: x = X / ZZ = X ZZZ / (ZZ ZZZ), y = Y / ZZZ = Y ZZ / (ZZ ZZZ),
    // one inversion (Fermat; 0 for 0, so the identity, ZZ = ZZZ = 0, gives arkworks' (0, 0)).
    // 5M + I. Last in the program: it has no jumps, and the inversion is long.
    e.asm.entry("to_affine");
    e.mul(t[0], zz1, zzz1);
    e.inverse(t[1], t[0], t[2]);
    e.mul(t[3], x1, zzz1);
    e.mul(x2, t[3], t[1]);
    e.mul(t[3], y1, zz1);
    e.mul(y2, t[3], t[1]);
    e.asm.halt();
    e.asm.finish()
}

/// XYZZ + affine, in place into `p1` (madd-2008-s: 8M + 2S; mdbl-2008-s-1 when the points
/// are equal: 4M + 3S), with scratch `t`.
fn emit_xyzz_madd<F: Field>(
    e: &mut ElAsm<F>,
    [x1, y1, zz1, zzz1]: [El; 4],
    [x2, y2]: [El; 2],
    t: &[El],
) {
    // madd-2008-s: 8M + 2S; mdbl-2008-s-1 when the points are equal: 4M + 3S.
    let (end, not_input_identity, general, add, ident) = (
        e.asm.label(),
        e.asm.label(),
        e.asm.label(),
        e.asm.label(),
        e.asm.label(),
    );
    e.jnz(y2, not_input_identity);
    e.jz(x2, end); // (0, 0): the affine identity, nothing to add
    e.asm.place(not_input_identity);
    e.jnz(zz1, general);
    e.copy(x1, x2); // identity + Q = Q
    e.copy(y1, y2);
    e.one(zz1);
    e.one(zzz1);
    e.asm.jmp(end);
    e.asm.place(general);
    e.mul(t[0], x2, zz1); // U2
    e.mul(t[1], y2, zzz1); // S2
    e.sub(t[0], t[0], x1); // P = U2 - X1
    e.sub(t[1], t[1], y1); // R = S2 - Y1
    e.jnz(t[0], add);
    e.jnz(t[1], ident); // P == -Q
    // P == Q: mdbl-2008-s-1 of the affine input.
    e.dbl(t[2], y2); // U = 2y
    e.sqr(t[3], t[2]); // V = U^2
    e.mul(t[4], t[2], t[3]); // W = U V
    e.mul(t[5], x2, t[3]); // S = x V
    e.sqr(t[6], x2);
    e.dbl(t[7], t[6]);
    e.add(t[6], t[6], t[7]); // M = 3 x^2
    e.sqr(x1, t[6]);
    e.dbl(t[7], t[5]);
    e.sub(x1, x1, t[7]); // X3 = M^2 - 2S
    e.sub(t[5], t[5], x1);
    e.mul(t[5], t[6], t[5]);
    e.mul(t[7], t[4], y2);
    e.sub(y1, t[5], t[7]); // Y3 = M (S - X3) - W y
    e.copy(zz1, t[3]); // ZZ3 = V
    e.copy(zzz1, t[4]); // ZZZ3 = W
    e.asm.jmp(end);
    e.asm.place(ident);
    set_xyzz_identity(e, [x1, y1, zz1, zzz1]);
    e.asm.jmp(end);
    e.asm.place(add);
    e.sqr(t[2], t[0]); // PP
    e.mul(t[3], t[0], t[2]); // PPP
    e.mul(t[4], x1, t[2]); // Q = X1 PP
    e.sqr(x1, t[1]);
    e.sub(x1, x1, t[3]);
    e.dbl(t[5], t[4]);
    e.sub(x1, x1, t[5]); // X3 = R^2 - PPP - 2Q
    e.sub(t[4], t[4], x1);
    e.mul(t[4], t[1], t[4]);
    e.mul(t[5], y1, t[3]);
    e.sub(y1, t[4], t[5]); // Y3 = R (Q - X3) - Y1 PPP
    e.mul(zz1, zz1, t[2]); // ZZ3 = ZZ1 PP
    e.mul(zzz1, zzz1, t[3]); // ZZZ3 = ZZZ1 PPP
    e.asm.place(end);
}

/// XYZZ + XYZZ, in place into `p1` (add-2008-s: 12M + 2S; dbl-2008-s-1 when the points are
/// equal), with scratch `t`.
fn emit_xyzz_add<F: Field>(
    e: &mut ElAsm<F>,
    [x1, y1, zz1, zzz1]: [El; 4],
    [x2, y2, zz2, zzz2]: [El; 4],
    t: &[El],
) {
    // add-2008-s: 12M + 2S; dbl-2008-s-1 when the points are equal.
    let (end, general, add, ident) = (e.asm.label(), e.asm.label(), e.asm.label(), e.asm.label());
    e.jz(zz2, end); // + identity
    e.jnz(zz1, general);
    for (d, a) in [(x1, x2), (y1, y2), (zz1, zz2), (zzz1, zzz2)] {
        e.copy(d, a);
    }
    e.asm.jmp(end);
    e.asm.place(general);
    e.mul(t[0], x1, zz2); // U1
    e.mul(t[1], x2, zz1); // U2
    e.mul(t[2], y1, zzz2); // S1
    e.mul(t[3], y2, zzz1); // S2
    e.sub(t[1], t[1], t[0]); // P = U2 - U1
    e.sub(t[3], t[3], t[2]); // R = S2 - S1
    e.jnz(t[1], add);
    e.jnz(t[3], ident);
    emit_xyzz_dbl(e, [x1, y1, zz1, zzz1], &t[4..]);
    e.asm.jmp(end);
    e.asm.place(ident);
    set_xyzz_identity(e, [x1, y1, zz1, zzz1]);
    e.asm.jmp(end);
    e.asm.place(add);
    e.sqr(t[4], t[1]); // PP
    e.mul(t[5], t[1], t[4]); // PPP
    e.mul(t[6], t[0], t[4]); // Q = U1 PP
    e.sqr(x1, t[3]);
    e.sub(x1, x1, t[5]);
    e.dbl(t[7], t[6]);
    e.sub(x1, x1, t[7]); // X3 = R^2 - PPP - 2Q
    e.sub(t[6], t[6], x1);
    e.mul(t[6], t[3], t[6]);
    e.mul(t[7], t[2], t[5]);
    e.sub(y1, t[6], t[7]); // Y3 = R (Q - X3) - S1 PPP
    e.mul(zz1, zz1, zz2);
    e.mul(zz1, zz1, t[4]); // ZZ3 = ZZ1 ZZ2 PP
    e.mul(zzz1, zzz1, zzz2);
    e.mul(zzz1, zzz1, t[5]); // ZZZ3 = ZZZ1 ZZZ2 PPP
    e.asm.place(end);
}

fn set_xyzz_identity<F: Field>(e: &mut ElAsm<F>, [x, y, zz, zzz]: [El; 4]) {
    e.one(x);
    e.one(y);
    e.zero(zz);
    e.zero(zzz);
}

/// dbl-2008-s-1 (a = 0) in place.
fn emit_xyzz_dbl<F: Field>(e: &mut ElAsm<F>, [x1, y1, zz1, zzz1]: [El; 4], t: &[El]) {
    e.dbl(t[0], y1); // U = 2Y
    e.sqr(t[1], t[0]); // V = U^2
    e.mul(t[2], t[0], t[1]); // W = U V
    e.mul(t[3], x1, t[1]); // S = X V
    e.sqr(t[4], x1);
    e.dbl(t[5], t[4]);
    e.add(t[4], t[4], t[5]); // M = 3 X^2
    e.sqr(x1, t[4]);
    e.dbl(t[5], t[3]);
    e.sub(x1, x1, t[5]); // X3 = M^2 - 2S
    e.sub(t[3], t[3], x1);
    e.mul(t[3], t[4], t[3]);
    e.mul(t[5], t[2], y1);
    e.sub(y1, t[3], t[5]); // Y3 = M (S - X3) - W Y
    e.mul(zz1, zz1, t[1]); // ZZ3 = V ZZ
    e.mul(zzz1, zzz1, t[2]); // ZZZ3 = W ZZZ
}

/// Twisted Edwards curves with `a = -1`, in extended coordinates (`x = X/Z`, `y = Y/Z`,
/// `T = XY/Z`; Hisil, Wong, Carter, Dawson 2008), complete on ed-on-bls12-377 (`a` square, `d`
/// non-square), so no special cases; on BLS12-377 G1's form (`d` square) a sum that divides
/// by zero leaves a mark (`emit_te_mark`). An affine input is stored as `(y - x, y + x, 2d x y)`
/// (slots 4-6; the identity `(0, 1)` as `(1, 1, 0)`): the mixed addition madd-2008-hwcd-3
/// then takes 7M, against 10M from `(x, y)`. Negating it swaps slots 4 and 5 and negates
/// slot 6 (`GpuCurve::AFFINE_NEG_SWAP`). The projective addition is add-2008-hwcd-3 (9M,
/// `2d` loaded as a constant), the doubling dbl-2008-hwcd (4M + 4S).
pub fn twisted_edwards_a_minus_1<F: Field>(d: F) -> Program<F> {
    let mut e = ElAsm::<F>::new(1, 0);
    let s = |i| e.slot(i);
    let (x1, y1, t1, z1) = (s(0), s(1), s(2), s(3));
    let (x2, y2, t2, z2) = (s(4), s(5), s(6), s(7));
    let t: Vec<El> = (8..SLOTS).map(s).collect();
    let two_d = d.double();

    e.asm.entry("identity");
    e.zero(x1);
    e.one(y1);
    e.zero(t1);
    e.one(z1);
    e.asm.halt();

    // madd: slots 4-6 hold (y2 - x2, y2 + x2, 2d x2 y2), Z2 = 1.
    e.asm.entry("madd");
    e.sub(t[0], y1, x1);
    e.mul(t[0], t[0], x2); // A = (Y1 - X1)(y2 - x2)
    e.add(t[1], y1, x1);
    e.mul(t[1], t[1], y2); // B = (Y1 + X1)(y2 + x2)
    e.mul(t[2], t1, t2); // C = T1 2d T2
    e.dbl(t[3], z1); // D = 2 Z1
    emit_te_tail(&mut e, [x1, y1, t1, z1], &t);

    // add: slots 4-7 hold X2, Y2, T2, Z2.
    e.asm.entry("add");
    e.sub(t[0], y1, x1);
    e.sub(t[4], y2, x2);
    e.mul(t[0], t[0], t[4]); // A = (Y1 - X1)(Y2 - X2)
    e.add(t[1], y1, x1);
    e.add(t[4], y2, x2);
    e.mul(t[1], t[1], t[4]); // B = (Y1 + X1)(Y2 + X2)
    e.load_const(t[4], &[two_d]);
    e.mul(t[2], t1, t[4]);
    e.mul(t[2], t[2], t2); // C = T1 2d T2
    e.mul(t[3], z1, z2);
    e.dbl(t[3], t[3]); // D = 2 Z1 Z2
    emit_te_tail(&mut e, [x1, y1, t1, z1], &t);

    e.asm.entry("dbl");
    e.sqr(t[0], x1); // A = X^2
    e.sqr(t[1], y1); // B = Y^2
    e.sqr(t[2], z1);
    e.dbl(t[2], t[2]); // C = 2 Z^2
    e.add(t[3], x1, y1);
    e.sqr(t[3], t[3]);
    e.sub(t[3], t[3], t[0]);
    e.sub(t[3], t[3], t[1]); // E = (X + Y)^2 - A - B
    e.sub(t[4], t[1], t[0]); // G = D + B = B - A (D = a A = -A)
    e.sub(t[5], t[4], t[2]); // F = G - C
    e.add(t[6], t[0], t[1]);
    e.zero(t[7]);
    e.sub(t[6], t[7], t[6]); // H = D - B = -A - B
    e.mul(x1, t[3], t[5]); // X3 = E F
    e.mul(y1, t[4], t[6]); // Y3 = G H
    e.mul(t1, t[3], t[6]); // T3 = E H
    e.mul(z1, t[5], t[4]); // Z3 = F G
    emit_te_mark(&mut e, [x1, y1, t1, z1]);

    // To affine, into slots 4-6 as madd reads them: (y - x, y + x, 2d x y) with x = X / Z,
    // y = Y / Z (the identity (0, 1, 0, 1) gives (1, 1, 0), arkworks' (0, 1); the mark
    // X = Y = Z = 0 gives (0, 0, 0), which madd keeps as a mark). 4M + I.
    e.asm.entry("to_affine");
    e.inverse(t[0], z1, t[1]);
    e.mul(t[1], x1, t[0]); // x
    e.mul(t[2], y1, t[0]); // y
    e.sub(x2, t[2], t[1]);
    e.add(y2, t[2], t[1]);
    e.mul(t[3], t[1], t[2]);
    e.load_const(t[4], &[two_d]);
    e.mul(t2, t[3], t[4]);
    e.asm.halt();
    e.asm.finish()
}

/// The end of both twisted Edwards additions, from `A, B, C, D` in `t[0..4]`: `E = B - A`,
/// `F = D - C`, `G = D + C`, `H = B + A`, then `X3 = E F`, `Y3 = G H`, `T3 = E H`, `Z3 = F G`
/// into the accumulator (4M), and HALT.
fn emit_te_tail<F: Field>(e: &mut ElAsm<F>, [x1, y1, t1, z1]: [El; 4], t: &[El]) {
    e.sub(t[4], t[1], t[0]); // E
    e.sub(t[5], t[3], t[2]); // F
    e.add(t[6], t[3], t[2]); // G
    e.add(t[7], t[1], t[0]); // H
    e.mul(x1, t[4], t[5]);
    e.mul(y1, t[6], t[7]);
    e.mul(t1, t[4], t[7]);
    e.mul(z1, t[5], t[6]);
    emit_te_mark(e, [x1, y1, t1, z1]);
}

/// HALT where `Z3 != 0`; else (the unified formulas divided by zero, which only points of even
/// order on a non-complete curve make: BLS12-377 G1's form, crates/curves/src/te_map.rs) sets
/// `X3 = Y3 = T3 = 0` first. No point has `X = Y = 0`, and every formula here keeps it
/// (`A = B = C = 0`, so `E = H = 0`), so the mark reaches the sums, where the host finds it.
fn emit_te_mark<F: Field>(e: &mut ElAsm<F>, [x1, y1, t1, z1]: [El; 4]) {
    let end = e.asm.label();
    e.jnz(z1, end);
    e.zero(x1);
    e.zero(y1);
    e.zero(t1);
    e.asm.place(end);
    e.asm.halt();
}
