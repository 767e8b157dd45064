//! snarkjs' JSON: `proof.json` and `public.json` written as snarkjs writes them, and
//! `verification_key.json`, `proof.json` and `public.json` read back.
//!
//! Points are projective triples of decimal strings (`[x, y, "1"]`; G2 coordinates as
//! `[c0, c1]` pairs); scalars are decimal strings.

use ark_bn254::{Bn254, Fq, Fq2, Fr, G1Affine, G2Affine};
use ark_ec::AffineRepr;
use ark_ff::{One, PrimeField, Zero};
use ark_groth16::{Proof, VerifyingKey};
use serde_json::{Value, json};

use crate::error::CircomError;
use crate::field::{decimal, from_decimal};

fn g1_json(p: &G1Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([decimal(&x), decimal(&y), "1"]),
        None => json!(["0", "1", "0"]),
    }
}

fn fq2_json(x: &Fq2) -> Value {
    json!([decimal(&x.c0), decimal(&x.c1)])
}

fn g2_json(p: &G2Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([fq2_json(&x), fq2_json(&y), ["1", "0"]]),
        None => json!([["0", "0"], ["1", "0"], ["0", "0"]]),
    }
}

/// `proof.json` as snarkjs writes it.
pub fn proof_json(proof: &Proof<Bn254>) -> String {
    let v = json!({
        "pi_a": g1_json(&proof.a),
        "pi_b": g2_json(&proof.b),
        "pi_c": g1_json(&proof.c),
        "protocol": "groth16",
        "curve": "bn128",
    });
    pretty(&v)
}

/// `public.json`: the public signals as decimal strings.
pub fn public_json(signals: &[Fr]) -> String {
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

    /// A G1 point `[x, y, z]` with `z` one (or zero: the identity).
    fn g1(&self, v: &Value, what: &str) -> Result<G1Affine, CircomError> {
        let a = self.array(v, 3, what)?;
        let z: Fq = self.scalar(&a[2], what)?;
        if z.is_zero() {
            return Ok(G1Affine::zero());
        }
        let p = G1Affine::new_unchecked(self.scalar(&a[0], what)?, self.scalar(&a[1], what)?);
        if !z.is_one() || !p.is_on_curve() {
            return Err(self.error(format!("{what}: not an affine point of BN254's G1")));
        }
        Ok(p)
    }

    fn fq2(&self, v: &Value, what: &str) -> Result<Fq2, CircomError> {
        let a = self.array(v, 2, what)?;
        Ok(Fq2::new(
            self.scalar(&a[0], what)?,
            self.scalar(&a[1], what)?,
        ))
    }

    /// A G2 point `[x, y, z]` of `[c0, c1]` pairs.
    fn g2(&self, v: &Value, what: &str) -> Result<G2Affine, CircomError> {
        let a = self.array(v, 3, what)?;
        let z = self.fq2(&a[2], what)?;
        if z.is_zero() {
            return Ok(G2Affine::zero());
        }
        let p = G2Affine::new_unchecked(self.fq2(&a[0], what)?, self.fq2(&a[1], what)?);
        let fine = z.is_one() && p.is_on_curve() && p.is_in_correct_subgroup_assuming_on_curve();
        if !fine {
            return Err(self.error(format!("{what}: not an affine point of BN254's G2")));
        }
        Ok(p)
    }

    /// Checks `"protocol": "groth16"` and `"curve": "bn128"`.
    fn check_kind(&self) -> Result<(), CircomError> {
        for (key, want) in [("protocol", "groth16"), ("curve", "bn128")] {
            let got = self.get(&self.v, key)?;
            if got.as_str() != Some(want) {
                return Err(self.error(format!("\"{key}\" is {got}, not \"{want}\"")));
            }
        }
        Ok(())
    }
}

/// Reads snarkjs' `verification_key.json` of a BN254 Groth16 key.
pub fn read_verifying_key_json(text: &str) -> Result<VerifyingKey<Bn254>, CircomError> {
    let d = Doc::parse(text, "verification_key.json")?;
    d.check_kind()?;
    let v = &d.v;
    let ic = d
        .get(v, "IC")?
        .as_array()
        .ok_or_else(|| d.error("\"IC\" is not an array".into()))?;
    let gamma_abc_g1 = ic
        .iter()
        .enumerate()
        .map(|(i, p)| d.g1(p, &format!("IC[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(n) = v.get("nPublic").and_then(Value::as_u64)
        && n as usize + 1 != gamma_abc_g1.len()
    {
        return Err(d.error(format!("nPublic is {n} but IC has {} points", ic.len())));
    }
    Ok(VerifyingKey {
        alpha_g1: d.g1(d.get(v, "vk_alpha_1")?, "vk_alpha_1")?,
        beta_g2: d.g2(d.get(v, "vk_beta_2")?, "vk_beta_2")?,
        gamma_g2: d.g2(d.get(v, "vk_gamma_2")?, "vk_gamma_2")?,
        delta_g2: d.g2(d.get(v, "vk_delta_2")?, "vk_delta_2")?,
        gamma_abc_g1,
    })
}

/// Reads snarkjs' `proof.json`.
pub fn read_proof_json(text: &str) -> Result<Proof<Bn254>, CircomError> {
    let d = Doc::parse(text, "proof.json")?;
    d.check_kind()?;
    let v = &d.v;
    Ok(Proof {
        a: d.g1(d.get(v, "pi_a")?, "pi_a")?,
        b: d.g2(d.get(v, "pi_b")?, "pi_b")?,
        c: d.g1(d.get(v, "pi_c")?, "pi_c")?,
    })
}

/// Reads snarkjs' `public.json`.
pub fn read_public_json(text: &str) -> Result<Vec<Fr>, CircomError> {
    decimal_array(text, "public.json")
}

/// Reads a witness as JSON: an array of decimal strings, one per signal, the constant one
/// first (what `snarkjs wtns export json` writes). Each value must be below the scalar
/// field's prime.
pub fn read_witness_json(text: &str) -> Result<Vec<Fr>, CircomError> {
    decimal_array(text, "witness.json")
}

/// An array of decimal field elements.
fn decimal_array(text: &str, file: &'static str) -> Result<Vec<Fr>, CircomError> {
    let d = Doc::parse(text, file)?;
    let a =
        d.v.as_array()
            .ok_or_else(|| d.error("not an array".into()))?;
    a.iter()
        .enumerate()
        .map(|(i, s)| d.scalar(s, &format!("signal {i}")))
        .collect()
}
