//! [`write_zkey`]: a [`CircomKey`] as a snarkjs `.zkey` (the layout `zkey.rs` reads), so that
//! keys made by [`crate::setup`] prove with snarkjs and rapidsnark too.

use ark_bn254::{Fq, Fr, G1Affine, G2Affine};
use ark_ec::AffineRepr;
use ark_ff::{BigInteger256, PrimeField};

use crate::field::N8;
use crate::zkey::CircomKey;

fn limbs(out: &mut Vec<u8>, b: &BigInteger256) {
    for l in b.0 {
        out.extend_from_slice(&l.to_le_bytes());
    }
}

/// An `Fq` element in Montgomery form (`x R`), as a `.zkey`'s points hold them.
fn fq(out: &mut Vec<u8>, x: &Fq) {
    limbs(out, &x.0);
}

fn g1(out: &mut Vec<u8>, p: &G1Affine) {
    match p.xy() {
        Some((x, y)) => {
            fq(out, &x);
            fq(out, &y);
        }
        None => out.extend_from_slice(&[0; 2 * N8]),
    }
}

fn g2(out: &mut Vec<u8>, p: &G2Affine) {
    match p.xy() {
        Some((x, y)) => {
            for c in [x.c0, x.c1, y.c0, y.c1] {
                fq(out, &c);
            }
        }
        None => out.extend_from_slice(&[0; 4 * N8]),
    }
}

/// A coefficient as a `.zkey` stores it: `x R^2 mod r`, the Montgomery form of `x R`.
fn coefficient(out: &mut Vec<u8>, x: &Fr) {
    // x.0 is x R mod r (canonical), the element x R's Montgomery form is x R^2.
    let x_r = Fr::from_bigint(x.0).unwrap_or_default();
    limbs(out, &x_r.0);
}

fn section(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
}

/// The `.zkey` bytes of `key`: sections 1 to 9 as snarkjs writes them (the A matrix with its
/// rows that copy the public signals), and section 10 with no contributions.
pub fn write_zkey(key: &CircomKey) -> Vec<u8> {
    let pk = &key.proving_key;
    let mut out = Vec::new();
    out.extend_from_slice(b"zkey");
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&10u32.to_le_bytes());
    section(&mut out, 1, &1u32.to_le_bytes());
    let mut h = Vec::new();
    for m in [Fq::MODULUS, Fr::MODULUS] {
        h.extend_from_slice(&(N8 as u32).to_le_bytes());
        limbs(&mut h, &m);
    }
    for n in [key.num_variables, key.num_public, key.domain_size()] {
        h.extend_from_slice(&(n as u32).to_le_bytes());
    }
    g1(&mut h, &pk.vk.alpha_g1);
    g1(&mut h, &pk.beta_g1);
    g2(&mut h, &pk.vk.beta_g2);
    g2(&mut h, &pk.vk.gamma_g2);
    g1(&mut h, &pk.delta_g1);
    g2(&mut h, &pk.vk.delta_g2);
    section(&mut out, 2, &h);
    let g1s = |ps: &[G1Affine]| {
        let mut b = Vec::with_capacity(ps.len() * 2 * N8);
        ps.iter().for_each(|p| g1(&mut b, p));
        b
    };
    section(&mut out, 3, &g1s(&pk.vk.gamma_abc_g1));
    section(&mut out, 4, &coefficients(key));
    section(&mut out, 5, &g1s(&pk.a_query));
    section(&mut out, 6, &g1s(&pk.b_g1_query));
    let mut b2 = Vec::with_capacity(pk.b_g2_query.len() * 4 * N8);
    pk.b_g2_query.iter().for_each(|p| g2(&mut b2, p));
    section(&mut out, 7, &b2);
    section(&mut out, 8, &g1s(&pk.l_query));
    section(&mut out, 9, &g1s(&pk.h_query));
    // No ceremony: the circuit's hash (zeros) and no contributions.
    let mut mpc = vec![0u8; 64];
    mpc.extend_from_slice(&0u32.to_le_bytes());
    section(&mut out, 10, &mpc);
    out
}

/// Section 4: the A and B entries, then A's rows that copy the public signals.
fn coefficients(key: &CircomKey) -> Vec<u8> {
    let n_c = key.num_constraints();
    let entries = key
        .ab
        .iter()
        .map(|m| m.iter().map(Vec::len).sum::<usize>())
        .sum::<usize>();
    let count = entries + key.num_public + 1;
    let mut b = Vec::with_capacity(4 + count * (12 + N8));
    b.extend_from_slice(&(count as u32).to_le_bytes());
    let mut entry = |matrix: u32, row: usize, signal: usize, value: &Fr| {
        for w in [matrix, row as u32, signal as u32] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        coefficient(&mut b, value);
    };
    for (k, m) in key.ab.iter().enumerate() {
        for (row, terms) in m.iter().enumerate() {
            for (value, signal) in terms {
                entry(k as u32, row, *signal, value);
            }
        }
    }
    for i in 0..=key.num_public {
        entry(0, n_c + i, i, &Fr::from(1u64));
    }
    b
}
