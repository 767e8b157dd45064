//! The curves of circom's and snarkjs' files: [`CircomCurve`], what the readers and writers
//! need of a pairing (its elements' byte forms, its points from coordinates), implemented for
//! BN254 (snarkjs' `bn128`) and BLS12-381 (`bls12381`); and [`Curve`], which of them a file
//! is over, read from its header before anything else.

use ark_ec::AffineRepr;
use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ff::fields::{Fp, MontBackend, MontConfig};
use ark_ff::{BigInt, BigInteger, PrimeField, Zero};
use zkgpu_groth16::GpuPairing;

use crate::binfile::{BinFile, FileSections, Reader, Sections};
use crate::error::CircomError;
use crate::field::bigint;

mod sealed {
    pub trait Sealed {}
    impl Sealed for ark_bn254::Bn254 {}
    impl Sealed for ark_bls12_381::Bls12_381 {}
}

/// A pairing whose circom and snarkjs files zkgpu reads and writes: [`ark_bn254::Bn254`]
/// and [`ark_bls12_381::Bls12_381`]. Elements are little-endian, as many bytes as their
/// field's limbs take (32 for both scalar fields, 32 or 48 for the base fields); a key's
/// points in Montgomery form (`x R`, `R = 2^(8 n8)`), its matrix coefficients in Montgomery
/// form twice over (`x R^2`); witnesses and JSON canonical.
pub trait CircomCurve: GpuPairing + sealed::Sealed {
    /// The curve as the files name it.
    const CURVE: Curve;

    /// The base field element whose Montgomery form is `bytes` (`None` at or past the
    /// modulus); `bytes` is [`Curve::base_bytes`] long.
    fn base_from_montgomery(bytes: &[u8]) -> Option<Self::BaseField>;

    /// Appends `x`'s Montgomery form.
    fn base_to_montgomery(x: &Self::BaseField, out: &mut Vec<u8>);

    /// A `.zkey` matrix coefficient, stored as `x R^2 mod r` (`None` past the modulus).
    fn scalar_from_zkey(bytes: &[u8]) -> Option<Self::ScalarField>;

    /// Appends `x` as a `.zkey` stores a coefficient.
    fn scalar_to_zkey(x: &Self::ScalarField, out: &mut Vec<u8>);

    /// The G1 point `(x, y)`: `None` off the curve; `(0, 0)` is the identity. Subgroup
    /// membership is not checked (see [`CircomCurve::g1_in_group`]).
    fn g1(x: Self::BaseField, y: Self::BaseField) -> Option<Self::G1Affine>;

    /// Whether a point of G1's curve is in the prime-order group.
    fn g1_in_group(p: &Self::G1Affine) -> bool;

    /// The G2 point with coordinates `x = x[0] + x[1] u`, `y` likewise: `None` off the
    /// curve; all zero is the identity. Subgroup membership is not checked.
    fn g2(x: [Self::BaseField; 2], y: [Self::BaseField; 2]) -> Option<Self::G2Affine>;

    /// Whether a point of G2's curve is in the prime-order group.
    fn g2_in_group(p: &Self::G2Affine) -> bool;

    /// `[x.c0, x.c1, y.c0, y.c1]` of a G2 point, `None` for the identity.
    fn g2_coordinates(p: &Self::G2Affine) -> Option<[Self::BaseField; 4]>;
}

/// A Montgomery-form element of `n8` little-endian bytes.
fn from_montgomery<P: MontConfig<N>, const N: usize>(
    bytes: &[u8],
) -> Option<Fp<MontBackend<P, N>, N>> {
    let b: BigInt<N> = bigint::<Fp<MontBackend<P, N>, N>>(bytes);
    (b < P::MODULUS).then(|| Fp::new_unchecked(b))
}

fn to_montgomery<P: MontConfig<N>, const N: usize>(
    x: &Fp<MontBackend<P, N>, N>,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&x.0.to_bytes_le());
}

/// `x R^-1` twice: the zkey's bytes read as a Montgomery form, its canonical value read as
/// one again.
fn from_zkey<P: MontConfig<N>, const N: usize>(bytes: &[u8]) -> Option<Fp<MontBackend<P, N>, N>> {
    Some(Fp::new_unchecked(
        from_montgomery::<P, N>(bytes)?.into_bigint(),
    ))
}

fn to_zkey<P: MontConfig<N>, const N: usize>(x: &Fp<MontBackend<P, N>, N>, out: &mut Vec<u8>) {
    // x.0 is x R mod r (canonical); the element x R's Montgomery form is x R^2.
    let x_r = Fp::<MontBackend<P, N>, N>::from_bigint(x.0).unwrap_or_default();
    to_montgomery(&x_r, out);
}

fn sw_point<C: SWCurveConfig>(x: C::BaseField, y: C::BaseField) -> Option<Affine<C>> {
    if x.is_zero() && y.is_zero() {
        return Some(Affine::identity());
    }
    let p = Affine::new_unchecked(x, y);
    p.is_on_curve().then_some(p)
}

macro_rules! circom_curve {
    ($e:ty, $m:ident, $curve:ident) => {
        impl CircomCurve for $e {
            const CURVE: Curve = Curve::$curve;

            fn base_from_montgomery(bytes: &[u8]) -> Option<$m::Fq> {
                from_montgomery(bytes)
            }

            fn base_to_montgomery(x: &$m::Fq, out: &mut Vec<u8>) {
                to_montgomery(x, out)
            }

            fn scalar_from_zkey(bytes: &[u8]) -> Option<$m::Fr> {
                from_zkey(bytes)
            }

            fn scalar_to_zkey(x: &$m::Fr, out: &mut Vec<u8>) {
                to_zkey(x, out)
            }

            fn g1(x: $m::Fq, y: $m::Fq) -> Option<$m::G1Affine> {
                sw_point(x, y)
            }

            fn g1_in_group(p: &$m::G1Affine) -> bool {
                p.is_in_correct_subgroup_assuming_on_curve()
            }

            fn g2(x: [$m::Fq; 2], y: [$m::Fq; 2]) -> Option<$m::G2Affine> {
                sw_point($m::Fq2::new(x[0], x[1]), $m::Fq2::new(y[0], y[1]))
            }

            fn g2_in_group(p: &$m::G2Affine) -> bool {
                p.is_in_correct_subgroup_assuming_on_curve()
            }

            fn g2_coordinates(p: &$m::G2Affine) -> Option<[$m::Fq; 4]> {
                p.xy().map(|(x, y)| [x.c0, x.c1, y.c0, y.c1])
            }
        }
    };
}

circom_curve!(ark_bn254::Bn254, ark_bn254, Bn254);
circom_curve!(ark_bls12_381::Bls12_381, ark_bls12_381, Bls12_381);

/// The curve of a circom or snarkjs file, told by the primes in its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    /// BN254 (alt_bn128; snarkjs' `bn128`, circom's default prime).
    Bn254,
    /// BLS12-381 (snarkjs' `bls12381`, `circom --prime bls12381`).
    Bls12_381,
}

impl Curve {
    /// Every curve, in the order of the variants.
    pub const ALL: [Curve; 2] = [Curve::Bn254, Curve::Bls12_381];

    /// zkgpu's name (`bn254`, `bls12-381`: the prover's pairing name).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bn254 => "bn254",
            Self::Bls12_381 => "bls12-381",
        }
    }

    /// snarkjs' name, in its JSON files' `"curve"`.
    pub const fn snarkjs_name(self) -> &'static str {
        match self {
            Self::Bn254 => "bn128",
            Self::Bls12_381 => "bls12381",
        }
    }

    /// The curve named `name` (zkgpu's or snarkjs' name).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == name || c.snarkjs_name() == name)
    }

    /// Bytes of a base field element (32 or 48).
    pub fn base_bytes(self) -> usize {
        match self {
            Self::Bn254 => n8::<ark_bn254::Fq>(),
            Self::Bls12_381 => n8::<ark_bls12_381::Fq>(),
        }
    }

    /// Bytes of a scalar field element (32 for both).
    pub fn scalar_bytes(self) -> usize {
        match self {
            Self::Bn254 => n8::<ark_bn254::Fr>(),
            Self::Bls12_381 => n8::<ark_bls12_381::Fr>(),
        }
    }

    fn base_is(self, n8: usize, prime: &[u8]) -> bool {
        match self {
            Self::Bn254 => is_prime_of::<ark_bn254::Fq>(n8, prime),
            Self::Bls12_381 => is_prime_of::<ark_bls12_381::Fq>(n8, prime),
        }
    }

    fn scalar_is(self, n8: usize, prime: &[u8]) -> bool {
        match self {
            Self::Bn254 => is_prime_of::<ark_bn254::Fr>(n8, prime),
            Self::Bls12_381 => is_prime_of::<ark_bls12_381::Fr>(n8, prime),
        }
    }

    /// The curve whose scalar field a header's `n8` and `prime` give (a `.wtns` or `.r1cs`).
    fn of_scalar(r: &mut Reader<'_>, file: &'static str) -> Result<Self, CircomError> {
        let n8 = r.usize()?;
        let prime = r.take(n8)?;
        Self::ALL
            .into_iter()
            .find(|c| c.scalar_is(n8, prime))
            .ok_or_else(|| unsupported(file, "file", n8))
    }
}

impl std::fmt::Display for Curve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes of an element of `F` in circom's files: its limbs' bytes.
pub(crate) fn n8<F: PrimeField>() -> usize {
    <F::BigInt as BigInteger>::NUM_LIMBS * 8
}

fn is_prime_of<F: PrimeField>(n8_: usize, prime: &[u8]) -> bool {
    n8_ == n8::<F>() && bigint::<F>(prime) == F::MODULUS
}

/// "Only BN254 and BLS12-381": the error for a file over a field of `n8` bytes that is
/// neither curve's.
pub(crate) fn unsupported(file: &'static str, what: &str, n8: usize) -> CircomError {
    CircomError::Unsupported {
        file,
        what: format!(
            "a {what} over a {n8}-byte prime of neither supported curve: only BN254 (snarkjs' \
             bn128) and BLS12-381 (bls12381) are supported"
        ),
    }
}

/// The curve of a `.zkey` from its header's primes (the base field's, then the scalar
/// field's); a file of another kind or protocol, or over another curve, is a [`CircomError`].
pub fn zkey_curve(bytes: &[u8]) -> Result<Curve, CircomError> {
    zkey_curve_of(&mut BinFile::parse(
        bytes,
        b"zkey",
        &[1],
        crate::zkey::FILE,
    )?)
}

/// [`zkey_curve`] of the file at `path`, reading only its first sections.
pub fn zkey_file_curve(path: &std::path::Path) -> Result<Curve, CircomError> {
    zkey_curve_of(&mut FileSections::open(
        path,
        b"zkey",
        &[1],
        crate::zkey::FILE,
    )?)
}

pub(crate) fn zkey_curve_of(file: &mut impl Sections) -> Result<Curve, CircomError> {
    crate::zkey::check_protocol(&mut file.section(1)?.reader())?;
    let section = file.section(2)?;
    let mut r = section.reader();
    let n8q = r.usize()?;
    let q = r.take(n8q)?;
    let n8r = r.usize()?;
    let rp = r.take(n8r)?;
    Curve::ALL
        .into_iter()
        .find(|c| c.base_is(n8q, q) && c.scalar_is(n8r, rp))
        .ok_or_else(|| unsupported(crate::zkey::FILE, "key", n8q))
}

/// The curve whose scalar field a `.wtns` is over.
pub fn wtns_curve(bytes: &[u8]) -> Result<Curve, CircomError> {
    let file = BinFile::parse(bytes, b"wtns", &[2], crate::wtns::FILE)?;
    Curve::of_scalar(&mut file.section(1)?, crate::wtns::FILE)
}

/// The curve whose scalar field a circom `.r1cs` is over.
pub fn r1cs_curve(bytes: &[u8]) -> Result<Curve, CircomError> {
    let file = BinFile::parse(bytes, b"r1cs", &[1], crate::r1cs::FILE)?;
    Curve::of_scalar(&mut file.section(1)?, crate::r1cs::FILE)
}

/// The curve one of whose fields is `F`.
fn curve_of<F: PrimeField>() -> Option<Curve> {
    let (n8, p) = (n8::<F>(), F::MODULUS.to_bytes_le());
    Curve::ALL
        .into_iter()
        .find(|c| c.scalar_is(n8, &p) || c.base_is(n8, &p))
}

/// Checks that a header's field (its byte size, then its prime) is `F`; else
/// [`CircomError::Unsupported`] for `file`, saying `what` the file holds.
pub(crate) fn check_field<F: PrimeField>(
    r: &mut Reader<'_>,
    file: &'static str,
    what: &str,
) -> Result<(), CircomError> {
    let n8 = r.usize()?;
    let prime = r.take(n8)?;
    if is_prime_of::<F>(n8, prime) {
        return Ok(());
    }
    let found = Curve::ALL
        .into_iter()
        .find(|c| c.scalar_is(n8, prime) || c.base_is(n8, prime));
    let want = curve_of::<F>().map_or("another curve", Curve::name);
    Err(CircomError::Unsupported {
        file,
        what: match found {
            Some(other) => format!("{what} of {other}, not of {want}"),
            None => format!("{what} over a {n8}-byte prime of neither BN254 nor BLS12-381"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{AdditiveGroup, Field};

    #[test]
    fn byte_sizes_and_names() {
        assert_eq!(
            (Curve::Bn254.base_bytes(), Curve::Bn254.scalar_bytes()),
            (32, 32)
        );
        assert_eq!(
            (
                Curve::Bls12_381.base_bytes(),
                Curve::Bls12_381.scalar_bytes()
            ),
            (48, 32)
        );
        for c in Curve::ALL {
            assert_eq!(Curve::from_name(c.name()), Some(c));
            assert_eq!(Curve::from_name(c.snarkjs_name()), Some(c));
        }
        assert_eq!(Curve::from_name("bls12-377"), None);
        assert_eq!(<ark_bn254::Bn254 as GpuPairing>::NAME, Curve::Bn254.name());
        assert_eq!(
            <ark_bls12_381::Bls12_381 as GpuPairing>::NAME,
            Curve::Bls12_381.name()
        );
    }

    fn montgomery_round_trip<E: CircomCurve>() {
        use ark_ff::UniformRand;
        let mut rng = ark_std::test_rng();
        for _ in 0..20 {
            let x = E::BaseField::rand(&mut rng);
            let mut b = Vec::new();
            E::base_to_montgomery(&x, &mut b);
            assert_eq!(b.len(), E::CURVE.base_bytes());
            assert_eq!(E::base_from_montgomery(&b), Some(x));
            let s = E::ScalarField::rand(&mut rng);
            let mut b = Vec::new();
            E::scalar_to_zkey(&s, &mut b);
            assert_eq!(b.len(), E::CURVE.scalar_bytes());
            assert_eq!(E::scalar_from_zkey(&b), Some(s));
        }
        // The modulus itself is refused; one (R in Montgomery form) is read as one.
        let p = <E::BaseField as PrimeField>::MODULUS.to_bytes_le();
        assert_eq!(E::base_from_montgomery(&p), None);
        let mut one = Vec::new();
        E::base_to_montgomery(&E::BaseField::ONE, &mut one);
        assert_eq!(E::base_from_montgomery(&one), Some(E::BaseField::ONE));
    }

    #[test]
    fn montgomery_forms_round_trip_on_both_curves() {
        montgomery_round_trip::<ark_bn254::Bn254>();
        montgomery_round_trip::<ark_bls12_381::Bls12_381>();
    }

    fn points<E: CircomCurve>() {
        let g1 = E::G1Affine::generator();
        let (x, y) = g1.xy().unwrap();
        assert_eq!(E::g1(x, y), Some(g1));
        assert!(E::g1_in_group(&g1));
        assert_eq!(E::g1(x, y + E::BaseField::ONE), None);
        assert_eq!(
            E::g1(E::BaseField::ZERO, E::BaseField::ZERO),
            Some(E::G1Affine::zero())
        );
        let g2 = E::G2Affine::generator();
        let c = E::g2_coordinates(&g2).unwrap();
        assert_eq!(E::g2([c[0], c[1]], [c[2], c[3]]), Some(g2));
        assert!(E::g2_in_group(&g2));
        assert_eq!(E::g2([c[0], c[1]], [c[2], c[3] + E::BaseField::ONE]), None);
        let z = E::BaseField::ZERO;
        assert_eq!(E::g2([z, z], [z, z]), Some(E::G2Affine::zero()));
        assert_eq!(E::g2_coordinates(&E::G2Affine::zero()), None);
    }

    #[test]
    fn points_from_coordinates_on_both_curves() {
        points::<ark_bn254::Bn254>();
        points::<ark_bls12_381::Bls12_381>();
    }
}
