//! The snarkjs `.zkey` of a Groth16 circuit: its proving key and the A and B matrices.
//!
//! Sections: 1 the protocol (1 = Groth16); 2 the Groth16 header (the base and scalar fields'
//! byte sizes and primes, the variable count, the public count, the domain size, then
//! `alpha_1`, `beta_1`, `beta_2`, `gamma_2`, `delta_1`, `delta_2`); 3 the IC points; 4 the
//! matrix coefficients (a count, then per entry the matrix, 0 = A or 1 = B, the constraint,
//! the signal and the value); 5 to 9 the A, B1, B2, C (L) and H point vectors; 10 the
//! ceremony's contributions (not read).

use ark_bn254::Bn254;
use ark_ec::AffineRepr;
use ark_groth16::{ProvingKey, VerifyingKey};
use ark_relations::gr1cs::Matrix;
use zkgpu_groth16::R1csMatrices;

use crate::binfile::{BinFile, FileSections, Reader, Sections};
use crate::curve::{CircomCurve, check_field};
use crate::error::CircomError;
use crate::field::{g1, g1_bytes, g2, g2_bytes};

pub(crate) const FILE: &str = ".zkey";

/// A snarkjs Groth16 key: the proving key (with its verifying key) and the circuit's A and B
/// matrices, as ark-circom reads them. Over BN254 unless `E` says otherwise
/// ([`CircomCurve`]: BN254 or BLS12-381).
#[derive(Clone, Debug)]
pub struct CircomKey<E: CircomCurve = Bn254> {
    /// The proving key; its H query has one point per domain element (circom's reduction).
    pub proving_key: ProvingKey<E>,
    /// Rows of A and of B, one per constraint (the rows that copy the public signals
    /// removed).
    pub(crate) ab: [Matrix<E::ScalarField>; 2],
    /// Public signals (outputs and public inputs), the constant one not counted.
    pub num_public: usize,
    /// Signals, the constant one included.
    pub num_variables: usize,
}

impl<E: CircomCurve> CircomKey<E> {
    /// The domain's size: the H query's length (circom's reduction has one point per domain
    /// element; the reader checks it against the header).
    pub fn domain_size(&self) -> usize {
        self.proving_key.h_query.len()
    }

    /// Constraints of the circuit.
    pub fn num_constraints(&self) -> usize {
        self.ab[0].len()
    }

    /// Rows of A, one per constraint (without the rows that copy the public signals).
    pub fn a(&self) -> &Matrix<E::ScalarField> {
        &self.ab[0]
    }

    /// Rows of B, one per constraint.
    pub fn b(&self) -> &Matrix<E::ScalarField> {
        &self.ab[1]
    }

    /// The matrices in the prover's compact form, for circom's reduction.
    pub fn matrices(&self) -> Result<R1csMatrices<E::ScalarField>, CircomError> {
        let inputs = self.num_public + 1;
        R1csMatrices::from_circom(
            &self.ab[0],
            &self.ab[1],
            inputs,
            self.num_variables - inputs,
            self.num_constraints(),
        )
        .map_err(|e| CircomError::format(FILE, e.to_string()))
    }
}

/// Reads a snarkjs Groth16 `.zkey` over `E`, checking every length, both primes and every
/// point against the curve: a damaged file, or one over another curve, is a [`CircomError`]
/// ([`crate::zkey_curve`] tells which curve a key is over).
pub fn read_zkey<E: CircomCurve>(bytes: &[u8]) -> Result<CircomKey<E>, CircomError> {
    read_sections(&mut BinFile::parse(bytes, b"zkey", &[1], FILE)?)
}

/// [`read_zkey`] of the file at `path`, read one section at a time: the file's bytes are never
/// in memory whole (at most its largest section, beside the key being built), so a large key
/// is not held twice. A file that cannot be read is [`CircomError::Io`].
pub fn read_zkey_file<E: CircomCurve>(path: &std::path::Path) -> Result<CircomKey<E>, CircomError> {
    read_sections(&mut FileSections::open(path, b"zkey", &[1], FILE)?)
}

/// Section 1: the protocol, which must be Groth16's.
pub(crate) fn check_protocol(r: &mut Reader<'_>) -> Result<(), CircomError> {
    let protocol = r.u32()?;
    if protocol != 1 {
        let name = match protocol {
            2 => "PLONK",
            10 => "FFLONK",
            _ => "unknown",
        };
        return Err(CircomError::Unsupported {
            file: FILE,
            what: format!("a {name} key (protocol {protocol}), not Groth16"),
        });
    }
    Ok(())
}

fn read_sections<E: CircomCurve>(file: &mut impl Sections) -> Result<CircomKey<E>, CircomError> {
    check_protocol(&mut file.section(1)?.reader())?;
    let h = Header::<E>::read(&mut file.section(2)?.reader())?;
    let (vars, public, n) = (h.num_variables, h.num_public, h.domain_size);
    // The point sections first: the counts of the header are then backed by the file's
    // bytes before the coefficients' rows are allocated by them. One section at a time.
    let ic = g1_vector::<E>(&mut file.section(3)?.reader(), public + 1)?;
    let a_query = g1_vector::<E>(&mut file.section(5)?.reader(), vars)?;
    let b_g1_query = g1_vector::<E>(&mut file.section(6)?.reader(), vars)?;
    let b_g2_query = g2_vector::<E>(&mut file.section(7)?.reader(), vars)?;
    let l_query = g1_vector::<E>(&mut file.section(8)?.reader(), vars - public - 1)?;
    let h_query = g1_vector::<E>(&mut file.section(9)?.reader(), n)?;
    let [a, b] = read_coefficients::<E>(&mut file.section(4)?.reader(), &h)?;
    let vk = VerifyingKey {
        alpha_g1: h.alpha_g1,
        beta_g2: h.beta_g2,
        gamma_g2: h.gamma_g2,
        delta_g2: h.delta_g2,
        gamma_abc_g1: ic,
    };
    Ok(CircomKey {
        proving_key: ProvingKey {
            vk,
            beta_g1: h.beta_g1,
            delta_g1: h.delta_g1,
            a_query,
            b_g1_query,
            b_g2_query,
            h_query,
            l_query,
        },
        ab: [a, b],
        num_public: public,
        num_variables: vars,
    })
}

/// Section 2.
#[derive(Debug)]
struct Header<E: CircomCurve> {
    num_variables: usize,
    num_public: usize,
    domain_size: usize,
    alpha_g1: E::G1Affine,
    beta_g1: E::G1Affine,
    beta_g2: E::G2Affine,
    gamma_g2: E::G2Affine,
    delta_g1: E::G1Affine,
    delta_g2: E::G2Affine,
}

impl<E: CircomCurve> Header<E> {
    fn read(r: &mut Reader<'_>) -> Result<Self, CircomError> {
        check_field::<E::BaseField>(r, FILE, "a key over the base field")?;
        check_field::<E::ScalarField>(r, FILE, "a key over the scalar field")?;
        let (num_variables, num_public, domain_size) = (r.usize()?, r.usize()?, r.usize()?);
        if num_public + 1 > num_variables || !domain_size.is_power_of_two() {
            return Err(r.error(format!(
                "holds {num_variables} signals, {num_public} public and a domain of \
                 {domain_size}: not a Groth16 key"
            )));
        }
        let (g1b, g2b) = (g1_bytes::<E>(), g2_bytes::<E>());
        let alpha_g1 = point(r, g1b, g1::<E>, 0)?;
        let beta_g1 = point(r, g1b, g1::<E>, 1)?;
        let mut g2s = [E::G2Affine::zero(); 2];
        for (k, p) in g2s.iter_mut().enumerate() {
            *p = point(r, g2b, g2::<E>, 2 + k)?;
        }
        let delta_g1 = point(r, g1b, g1::<E>, 4)?;
        let delta_g2 = point(r, g2b, g2::<E>, 5)?;
        // The few points of the header: check their subgroups too.
        let in_group = [g2s[0], g2s[1], delta_g2].iter().all(E::g2_in_group)
            && [alpha_g1, beta_g1, delta_g1].iter().all(E::g1_in_group);
        if !in_group {
            return Err(r.error("holds a point outside the prime-order group".into()));
        }
        Ok(Self {
            num_variables,
            num_public,
            domain_size,
            alpha_g1,
            beta_g1,
            beta_g2: g2s[0],
            gamma_g2: g2s[1],
            delta_g1,
            delta_g2,
        })
    }
}

/// One point of `bytes` bytes decoded by `decode`; `index` names it in the error.
fn point<P>(
    r: &mut Reader<'_>,
    bytes: usize,
    decode: fn(&[u8]) -> Option<P>,
    index: usize,
) -> Result<P, CircomError> {
    let section = r.section();
    decode(r.take(bytes)?).ok_or(CircomError::NotOnCurve { section, index })
}

/// A section of exactly `len` points, decoded on the CPU cores where there are threads.
fn vector<P: Send>(
    r: &mut Reader<'_>,
    len: usize,
    bytes: usize,
    decode: fn(&[u8]) -> Option<P>,
) -> Result<Vec<P>, CircomError> {
    let section = r.section();
    let data = r.rest_exactly(len, bytes)?;
    let one =
        |(index, c): (usize, &[u8])| decode(c).ok_or(CircomError::NotOnCurve { section, index });
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        data.par_chunks_exact(bytes).enumerate().map(one).collect()
    }
    #[cfg(target_arch = "wasm32")]
    data.chunks_exact(bytes).enumerate().map(one).collect()
}

fn g1_vector<E: CircomCurve>(
    r: &mut Reader<'_>,
    len: usize,
) -> Result<Vec<E::G1Affine>, CircomError> {
    vector(r, len, g1_bytes::<E>(), g1::<E>)
}

fn g2_vector<E: CircomCurve>(
    r: &mut Reader<'_>,
    len: usize,
) -> Result<Vec<E::G2Affine>, CircomError> {
    vector(r, len, g2_bytes::<E>(), g2::<E>)
}

/// Section 4: the A and B rows of the constraints, the rows that copy the public signals
/// (`A[n_c + i] = z_i` for `i <= n_public`, which the reduction adds itself) checked and
/// dropped.
fn read_coefficients<E: CircomCurve>(
    r: &mut Reader<'_>,
    h: &Header<E>,
) -> Result<[Matrix<E::ScalarField>; 2], CircomError> {
    let entry = 12 + E::CURVE.scalar_bytes();
    let count = r.usize()?;
    let data = r.rest_exactly(count, entry)?;
    let mut m: [Matrix<E::ScalarField>; 2] = [Vec::new(), Vec::new()];
    let mut last = 0;
    for (k, e) in data.chunks_exact(entry).enumerate() {
        let word = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]) as usize;
        let (matrix, row, signal) = (word(0), word(4), word(8));
        let value = E::scalar_from_zkey(&e[12..]);
        let bad = |what: &str| r.error(format!("entry {k}: {what}"));
        let Some(value) = value else {
            return Err(bad("a coefficient past the scalar field's modulus"));
        };
        if matrix > 1 || row >= h.domain_size || signal >= h.num_variables {
            return Err(bad(&format!(
                "matrix {matrix}, constraint {row}, signal {signal} out of range"
            )));
        }
        let rows = &mut m[matrix];
        if rows.len() <= row {
            rows.resize(row + 1, Vec::new());
        }
        rows[row].push((value, signal));
        last = last.max(row);
    }
    // The last n_public + 1 rows copy the public signals.
    let Some(constraints) = (last + 1).checked_sub(h.num_public + 1) else {
        return Err(r.error("lacks the rows that copy the public signals".into()));
    };
    let [mut a, mut b] = m;
    a.resize(last + 1, Vec::new());
    let copies = a.split_off(constraints);
    let copy_ok = copies
        .iter()
        .enumerate()
        .all(|(i, row)| row.len() == 1 && row[0] == (E::ScalarField::from(1u64), i));
    if !copy_ok || b.len() > constraints {
        return Err(r.error("has rows that copy the public signals of another shape".into()));
    }
    b.resize(constraints, Vec::new());
    if constraints + h.num_public + 1 > h.domain_size {
        return Err(r.error(format!(
            "holds {constraints} constraints, too many for its domain of {}",
            h.domain_size
        )));
    }
    Ok([a, b])
}
