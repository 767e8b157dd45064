//! [`write_zkey`]: a [`CircomKey`] as a snarkjs `.zkey` (the layout `zkey.rs` reads), so that
//! keys made by [`crate::setup`] prove with snarkjs and rapidsnark too.

use ark_ec::AffineRepr;
use ark_ff::{BigInteger, PrimeField};

use crate::curve::CircomCurve;
use crate::field::{g1_bytes, g2_bytes};
use crate::zkey::CircomKey;

fn g1<E: CircomCurve>(out: &mut Vec<u8>, p: &E::G1Affine) {
    match p.xy() {
        Some((x, y)) => {
            E::base_to_montgomery(&x, out);
            E::base_to_montgomery(&y, out);
        }
        None => out.resize(out.len() + g1_bytes::<E>(), 0),
    }
}

fn g2<E: CircomCurve>(out: &mut Vec<u8>, p: &E::G2Affine) {
    match E::g2_coordinates(p) {
        Some(c) => c.iter().for_each(|x| E::base_to_montgomery(x, out)),
        None => out.resize(out.len() + g2_bytes::<E>(), 0),
    }
}

fn section(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
}

/// The `.zkey` bytes of `key`: sections 1 to 9 as snarkjs writes them (the A matrix with its
/// rows that copy the public signals), and section 10 with no contributions.
pub fn write_zkey<E: CircomCurve>(key: &CircomKey<E>) -> Vec<u8> {
    let pk = &key.proving_key;
    let mut out = Vec::new();
    out.extend_from_slice(b"zkey");
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&10u32.to_le_bytes());
    section(&mut out, 1, &1u32.to_le_bytes());
    let mut h = Vec::new();
    for m in [
        E::BaseField::MODULUS.to_bytes_le(),
        E::ScalarField::MODULUS.to_bytes_le(),
    ] {
        h.extend_from_slice(&(m.len() as u32).to_le_bytes());
        h.extend_from_slice(&m);
    }
    for n in [key.num_variables, key.num_public, key.domain_size()] {
        h.extend_from_slice(&(n as u32).to_le_bytes());
    }
    g1::<E>(&mut h, &pk.vk.alpha_g1);
    g1::<E>(&mut h, &pk.beta_g1);
    g2::<E>(&mut h, &pk.vk.beta_g2);
    g2::<E>(&mut h, &pk.vk.gamma_g2);
    g1::<E>(&mut h, &pk.delta_g1);
    g2::<E>(&mut h, &pk.vk.delta_g2);
    section(&mut out, 2, &h);
    let g1s = |ps: &[E::G1Affine]| {
        let mut b = Vec::with_capacity(ps.len() * g1_bytes::<E>());
        ps.iter().for_each(|p| g1::<E>(&mut b, p));
        b
    };
    section(&mut out, 3, &g1s(&pk.vk.gamma_abc_g1));
    section(&mut out, 4, &coefficients(key));
    section(&mut out, 5, &g1s(&pk.a_query));
    section(&mut out, 6, &g1s(&pk.b_g1_query));
    let mut b2 = Vec::with_capacity(pk.b_g2_query.len() * g2_bytes::<E>());
    pk.b_g2_query.iter().for_each(|p| g2::<E>(&mut b2, p));
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
fn coefficients<E: CircomCurve>(key: &CircomKey<E>) -> Vec<u8> {
    let n_c = key.num_constraints();
    let entries = key
        .ab
        .iter()
        .map(|m| m.iter().map(Vec::len).sum::<usize>())
        .sum::<usize>();
    let count = entries + key.num_public + 1;
    let mut b = Vec::with_capacity(4 + count * (12 + E::CURVE.scalar_bytes()));
    b.extend_from_slice(&(count as u32).to_le_bytes());
    let mut entry = |matrix: u32, row: usize, signal: usize, value: &E::ScalarField| {
        for w in [matrix, row as u32, signal as u32] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        E::scalar_to_zkey(value, &mut b);
    };
    for (k, m) in key.ab.iter().enumerate() {
        for (row, terms) in m.iter().enumerate() {
            for (value, signal) in terms {
                entry(k as u32, row, *signal, value);
            }
        }
    }
    for i in 0..=key.num_public {
        entry(0, n_c + i, i, &E::ScalarField::from(1u64));
    }
    b
}
