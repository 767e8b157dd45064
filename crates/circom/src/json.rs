//! snarkjs' JSON: `proof.json` and `public.json` written as snarkjs writes them, and
//! `verification_key.json`, `proof.json` and `public.json` read back.
//!
//! Points are projective triples of decimal strings (`[x, y, "1"]`; G2 coordinates as
//! `[c0, c1]` pairs); scalars are decimal strings.

use ark_ec::AffineRepr;
use ark_ff::{One, PrimeField, Zero};
use ark_groth16::{Proof, VerifyingKey};
use serde_json::{Value, json};

use crate::curve::CircomCurve;
use crate::error::CircomError;
use crate::field::{decimal, from_decimal};

fn g1_json<E: CircomCurve>(p: &E::G1Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([decimal(&x), decimal(&y), "1"]),
        None => json!(["0", "1", "0"]),
    }
}

fn g2_json<E: CircomCurve>(p: &E::G2Affine) -> Value {
    match E::g2_coordinates(p) {
        Some([a, b, c, d]) => json!([
            [decimal(&a), decimal(&b)],
            [decimal(&c), decimal(&d)],
            ["1", "0"]
        ]),
        None => json!([["0", "0"], ["1", "0"], ["0", "0"]]),
    }
}

/// `proof.json` as snarkjs writes it (`"curve"` names `E`: `bn128` or `bls12381`).
pub fn proof_json<E: CircomCurve>(proof: &Proof<E>) -> String {
    let v = json!({
        "pi_a": g1_json::<E>(&proof.a),
        "pi_b": g2_json::<E>(&proof.b),
        "pi_c": g1_json::<E>(&proof.c),
        "protocol": "groth16",
        "curve": E::CURVE.snarkjs_name(),
    });
    pretty(&v)
}

/// `public.json`: the public signals as decimal strings.
pub fn public_json<F: PrimeField>(signals: &[F]) -> String {
    pretty(&Value::from(
        signals.iter().map(decimal).collect::<Vec<_>>(),
    ))
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// Reads one JSON file's text.
struct Doc {
    file: &'static str,
    v: Value,
}

impl Doc {
    fn parse(text: &str, file: &'static str) -> Result<Self, CircomError> {
        let v = serde_json::from_str(text).map_err(|e| CircomError::Json {
            file,
            what: e.to_string(),
        })?;
        Ok(Self { file, v })
    }

    fn error(&self, what: String) -> CircomError {
        CircomError::Json {
            file: self.file,
            what,
        }
    }

    fn get<'a>(&self, v: &'a Value, key: &str) -> Result<&'a Value, CircomError> {
        v.get(key)
            .ok_or_else(|| self.error(format!("no \"{key}\"")))
    }

    fn scalar<F: PrimeField>(&self, v: &Value, what: &str) -> Result<F, CircomError> {
        v.as_str()
            .and_then(from_decimal)
            .ok_or_else(|| self.error(format!("{what}: {v} is not a canonical decimal string")))
    }

    fn array<'a>(&self, v: &'a Value, len: usize, what: &str) -> Result<&'a [Value], CircomError> {
        match v.as_array() {
            Some(a) if a.len() == len => Ok(a),
            _ => Err(self.error(format!("{what}: not an array of {len}"))),
        }
    }

    /// A G1 point `[x, y, z]` with `z` one (or zero: the identity), in the group.
    fn g1<E: CircomCurve>(&self, v: &Value, what: &str) -> Result<E::G1Affine, CircomError> {
        let a = self.array(v, 3, what)?;
        let z: E::BaseField = self.scalar(&a[2], what)?;
        if z.is_zero() {
            return Ok(E::G1Affine::zero());
        }
        let p = E::g1(self.scalar(&a[0], what)?, self.scalar(&a[1], what)?)
            .filter(|p| z.is_one() && !p.is_zero() && E::g1_in_group(p));
        p.ok_or_else(|| self.error(format!("{what}: not an affine point of {}'s G1", E::CURVE)))
    }

    fn fq2<E: CircomCurve>(&self, v: &Value, what: &str) -> Result<[E::BaseField; 2], CircomError> {
        let a = self.array(v, 2, what)?;
        Ok([self.scalar(&a[0], what)?, self.scalar(&a[1], what)?])
    }

    /// A G2 point `[x, y, z]` of `[c0, c1]` pairs, in the group.
    fn g2<E: CircomCurve>(&self, v: &Value, what: &str) -> Result<E::G2Affine, CircomError> {
        let a = self.array(v, 3, what)?;
        let z = self.fq2::<E>(&a[2], what)?;
        if z.iter().all(Zero::is_zero) {
            return Ok(E::G2Affine::zero());
        }
        let z_one = z[0].is_one() && z[1].is_zero();
        let p = E::g2(self.fq2::<E>(&a[0], what)?, self.fq2::<E>(&a[1], what)?)
            .filter(|p| z_one && !p.is_zero() && E::g2_in_group(p));
        p.ok_or_else(|| self.error(format!("{what}: not an affine point of {}'s G2", E::CURVE)))
    }

    /// Checks `"protocol": "groth16"` and that `"curve"` is `E`'s snarkjs name.
    fn check_kind<E: CircomCurve>(&self) -> Result<(), CircomError> {
        let curve = E::CURVE.snarkjs_name();
        for (key, want) in [("protocol", "groth16"), ("curve", curve)] {
            let got = self.get(&self.v, key)?;
            if got.as_str() != Some(want) {
                return Err(self.error(format!("\"{key}\" is {got}, not \"{want}\"")));
            }
        }
        Ok(())
    }
}

/// Reads snarkjs' `verification_key.json` of a Groth16 key over `E` (its `"curve"` must
/// be `E`'s).
pub fn read_verifying_key_json<E: CircomCurve>(text: &str) -> Result<VerifyingKey<E>, CircomError> {
    let d = Doc::parse(text, "verification_key.json")?;
    d.check_kind::<E>()?;
    let v = &d.v;
    let ic = d
        .get(v, "IC")?
        .as_array()
        .ok_or_else(|| d.error("\"IC\" is not an array".into()))?;
    let gamma_abc_g1 = ic
        .iter()
        .enumerate()
        .map(|(i, p)| d.g1::<E>(p, &format!("IC[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(n) = v.get("nPublic").and_then(Value::as_u64)
        && n as usize + 1 != gamma_abc_g1.len()
    {
        return Err(d.error(format!("nPublic is {n} but IC has {} points", ic.len())));
    }
    Ok(VerifyingKey {
        alpha_g1: d.g1::<E>(d.get(v, "vk_alpha_1")?, "vk_alpha_1")?,
        beta_g2: d.g2::<E>(d.get(v, "vk_beta_2")?, "vk_beta_2")?,
        gamma_g2: d.g2::<E>(d.get(v, "vk_gamma_2")?, "vk_gamma_2")?,
        delta_g2: d.g2::<E>(d.get(v, "vk_delta_2")?, "vk_delta_2")?,
        gamma_abc_g1,
    })
}

/// Reads snarkjs' `proof.json` of a proof over `E` (its `"curve"` must be `E`'s).
pub fn read_proof_json<E: CircomCurve>(text: &str) -> Result<Proof<E>, CircomError> {
    let d = Doc::parse(text, "proof.json")?;
    d.check_kind::<E>()?;
    let v = &d.v;
    Ok(Proof {
        a: d.g1::<E>(d.get(v, "pi_a")?, "pi_a")?,
        b: d.g2::<E>(d.get(v, "pi_b")?, "pi_b")?,
        c: d.g1::<E>(d.get(v, "pi_c")?, "pi_c")?,
    })
}

/// Reads snarkjs' `public.json`: decimal strings of the scalar field `F`.
pub fn read_public_json<F: PrimeField>(text: &str) -> Result<Vec<F>, CircomError> {
    decimal_array(text, "public.json")
}

/// Reads a witness as JSON: an array of decimal strings, one per signal, the constant one
/// first (what `snarkjs wtns export json` writes). Each value must be below the scalar
/// field's prime.
pub fn read_witness_json<F: PrimeField>(text: &str) -> Result<Vec<F>, CircomError> {
    decimal_array(text, "witness.json")
}

/// An array of decimal field elements.
fn decimal_array<F: PrimeField>(text: &str, file: &'static str) -> Result<Vec<F>, CircomError> {
    let d = Doc::parse(text, file)?;
    let a =
        d.v.as_array()
            .ok_or_else(|| d.error("not an array".into()))?;
    a.iter()
        .enumerate()
        .map(|(i, s)| d.scalar(s, &format!("signal {i}")))
        .collect()
}
