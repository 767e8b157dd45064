//! The snarkjs `.zkey` of a Groth16 circuit: its proving key and the A and B matrices.
//!
//! Sections: 1 the protocol (1 = Groth16); 2 the Groth16 header (the base and scalar fields'
//! byte sizes and primes, the variable count, the public count, the domain size, then
//! `alpha_1`, `beta_1`, `beta_2`, `gamma_2`, `delta_1`, `delta_2`); 3 the IC points; 4 the
//! matrix coefficients (a count, then per entry the matrix, 0 = A or 1 = B, the constraint,
//! the signal and the value); 5 to 9 the A, B1, B2, C (L) and H point vectors; 10 the
//! ceremony's contributions (not read).

use ark_bn254::{Bn254, Fq, Fr, G1Affine, G2Affine};
use ark_groth16::{ProvingKey, VerifyingKey};
use ark_relations::gr1cs::Matrix;
use zkgpu_groth16::R1csMatrices;

use crate::binfile::{BinFile, FileSections, Reader, Sections};
use crate::error::CircomError;
use crate::field::{G1_BYTES, G2_BYTES, N8, check_field, g1, g2, zkey_coefficient};

const FILE: &str = ".zkey";

/// A snarkjs Groth16 key: the proving key (with its verifying key) and the circuit's A and B
/// matrices, as ark-circom reads them.
#[derive(Clone, Debug)]
pub struct CircomKey {
    /// The proving key; its H query has one point per domain element (circom's reduction).
    pub proving_key: ProvingKey<Bn254>,
    /// Rows of A and of B, one per constraint (the rows that copy the public signals
    /// removed).
    pub(crate) ab: [Matrix<Fr>; 2],
    /// Public signals (outputs and public inputs), the constant one not counted.
    pub num_public: usize,
    /// Signals, the constant one included.
    pub num_variables: usize,
}

impl CircomKey {
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
    pub fn a(&self) -> &Matrix<Fr> {
        &self.ab[0]
    }

    /// Rows of B, one per constraint.
    pub fn b(&self) -> &Matrix<Fr> {
        &self.ab[1]
    }

    /// The matrices in the prover's compact form, for circom's reduction.
    pub fn matrices(&self) -> Result<R1csMatrices<Fr>, CircomError> {
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

/// Reads a snarkjs `.zkey` for BN254 Groth16, checking every length, both primes and every
/// point against the curve: a damaged or foreign file is a [`CircomError`].
pub fn read_zkey(bytes: &[u8]) -> Result<CircomKey, CircomError> {
    read_sections(&mut BinFile::parse(bytes, b"zkey", &[1], FILE)?)
}

/// [`read_zkey`] of the file at `path`, read one section at a time: the file's bytes are never
/// in memory whole (at most its largest section, beside the key being built), so a large key
/// is not held twice. A file that cannot be read is [`CircomError::Io`].
pub fn read_zkey_file(path: &std::path::Path) -> Result<CircomKey, CircomError> {
    read_sections(&mut FileSections::open(path, b"zkey", &[1], FILE)?)
}

fn read_sections(file: &mut impl Sections) -> Result<CircomKey, CircomError> {
    let protocol = file.section(1)?.reader().u32()?;
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
    let h = Header::read(&mut file.section(2)?.reader())?;
    let (vars, public, n) = (h.num_variables, h.num_public, h.domain_size);
    // The point sections first: the counts of the header are then backed by the file's
    // bytes before the coefficients' rows are allocated by them. One section at a time.
    let ic = g1_vector(&mut file.section(3)?.reader(), public + 1)?;
    let a_query = g1_vector(&mut file.section(5)?.reader(), vars)?;
    let b_g1_query = g1_vector(&mut file.section(6)?.reader(), vars)?;
    let b_g2_query = g2_vector(&mut file.section(7)?.reader(), vars)?;
    let l_query = g1_vector(&mut file.section(8)?.reader(), vars - public - 1)?;
    let h_query = g1_vector(&mut file.section(9)?.reader(), n)?;
    let (a, b) = read_coefficients(&mut file.section(4)?.reader(), &h)?;
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
struct Header {
    num_variables: usize,
    num_public: usize,
    domain_size: usize,
    alpha_g1: G1Affine,
    beta_g1: G1Affine,
    beta_g2: G2Affine,
    gamma_g2: G2Affine,
    delta_g1: G1Affine,
    delta_g2: G2Affine,
}

impl Header {
    fn read(r: &mut Reader<'_>) -> Result<Self, CircomError> {
        let other = |which: &str, n8: usize| {
            format!(
                "a key over another curve (its {which} field has a {n8}-byte prime, not \
                 BN254's); only BN254 (snarkjs' bn128) is supported"
            )
        };
        check_field::<Fq>(r, FILE, |n8| other("base", n8))?;
        check_field::<Fr>(r, FILE, |n8| other("scalar", n8))?;
        let (num_variables, num_public, domain_size) = (r.usize()?, r.usize()?, r.usize()?);
        if num_public + 1 > num_variables || !domain_size.is_power_of_two() {
            return Err(r.error(format!(
                "holds {num_variables} signals, {num_public} public and a domain of \
                 {domain_size}: not a Groth16 key"
            )));
        }
        let alpha_g1 = point(r, G1_BYTES, g1, 0)?;
        let beta_g1 = point(r, G1_BYTES, g1, 1)?;
        let mut g2s = [G2Affine::identity(); 2];
        for (k, p) in g2s.iter_mut().enumerate() {
            *p = point(r, G2_BYTES, g2, 2 + k)?;
        }
        let delta_g1 = point(r, G1_BYTES, g1, 4)?;
        let delta_g2 = point(r, G2_BYTES, g2, 5)?;
        // The verifying key's G2 points are few: check their subgroup too.
        let in_group = [g2s[0], g2s[1], delta_g2]
            .iter()
            .all(|p| p.is_in_correct_subgroup_assuming_on_curve());
        if !in_group {
            return Err(r.error("holds a G2 point outside the prime-order group".into()));
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

fn g1_vector(r: &mut Reader<'_>, len: usize) -> Result<Vec<G1Affine>, CircomError> {
    vector(r, len, G1_BYTES, g1)
}

fn g2_vector(r: &mut Reader<'_>, len: usize) -> Result<Vec<G2Affine>, CircomError> {
    vector(r, len, G2_BYTES, g2)
}

/// Section 4: the A and B rows of the constraints, the rows that copy the public signals
/// (`A[n_c + i] = z_i` for `i <= n_public`, which the reduction adds itself) checked and
/// dropped.
fn read_coefficients(
    r: &mut Reader<'_>,
    h: &Header,
) -> Result<(Matrix<Fr>, Matrix<Fr>), CircomError> {
    const ENTRY: usize = 12 + N8;
    let count = r.usize()?;
    let data = r.rest_exactly(count, ENTRY)?;
    let mut m: [Matrix<Fr>; 2] = [Vec::new(), Vec::new()];
    let mut last = 0;
    for (k, e) in data.chunks_exact(ENTRY).enumerate() {
        let word = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]) as usize;
        let (matrix, row, signal) = (word(0), word(4), word(8));
        let value = zkey_coefficient(&e[12..]);
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
        .all(|(i, row)| row.len() == 1 && row[0] == (Fr::from(1u64), i));
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
    Ok((a, b))
}
