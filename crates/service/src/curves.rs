//! The curves the service proves on (BN254 and BLS12-381, as `zkgpu_circom` reads them): a
//! witness's values, a prepared key and a lane's provers of either, and the steps that are
//! generic over the curve ([`ServiceCurve`]) chosen once per key from its `.zkey`'s header.

use ark_bls12_381::Bls12_381;
use ark_bn254::Bn254;
use ark_ff::One;
use zkgpu_circom::{CircomCurve, CircomError, Curve};
use zkgpu_groth16::{GpuProver, PreparedProvingKey, ProveError};
use zkgpu_runtime::GpuContext;

/// A witness's values over one curve's scalar field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Values {
    Bn254(Vec<ark_bn254::Fr>),
    Bls12_381(Vec<ark_bls12_381::Fr>),
}

impl Values {
    /// A witness over `curve`'s scalar field: a `.wtns`, or with `json` an array of decimal
    /// strings.
    pub(crate) fn read(curve: Curve, body: &[u8], json: bool) -> Result<Self, CircomError> {
        match curve {
            Curve::Bn254 => read_as::<Bn254>(body, json).map(Self::Bn254),
            Curve::Bls12_381 => read_as::<Bls12_381>(body, json).map(Self::Bls12_381),
        }
    }

    /// Values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Bn254(v) => v.len(),
            Self::Bls12_381(v) => v.len(),
        }
    }

    /// Whether the first value (the constant signal) is one.
    pub(crate) fn starts_with_one(&self) -> bool {
        match self {
            Self::Bn254(v) => v.first().is_some_and(One::is_one),
            Self::Bls12_381(v) => v.first().is_some_and(One::is_one),
        }
    }

    /// The `.wtns` bytes of the values.
    pub(crate) fn to_wtns(&self) -> Vec<u8> {
        match self {
            Self::Bn254(v) => zkgpu_circom::write_wtns(v),
            Self::Bls12_381(v) => zkgpu_circom::write_wtns(v),
        }
    }
}

fn read_as<E: CircomCurve>(body: &[u8], json: bool) -> Result<Vec<E::ScalarField>, CircomError> {
    if !json {
        return zkgpu_circom::read_wtns(body);
    }
    let text = std::str::from_utf8(body).map_err(|_| CircomError::Json {
        file: "witness.json",
        what: "not UTF-8".into(),
    })?;
    zkgpu_circom::read_witness_json(text)
}

/// A key prepared on a lane's GPU, over its curve (boxed: the two differ in size).
pub(crate) enum Prepared {
    Bn254(Box<PreparedProvingKey<Bn254>>),
    Bls12_381(Box<PreparedProvingKey<Bls12_381>>),
}

impl Prepared {
    /// GPU bytes it holds.
    pub(crate) fn gpu_bytes(&self) -> u64 {
        match self {
            Self::Bn254(k) => k.gpu_bytes(),
            Self::Bls12_381(k) => k.gpu_bytes(),
        }
    }

    /// Its curve.
    pub(crate) fn curve(&self) -> Curve {
        match self {
            Self::Bn254(_) => Curve::Bn254,
            Self::Bls12_381(_) => Curve::Bls12_381,
        }
    }
}

/// A lane's provers on its GPU, one per curve, each made when its first key comes (a lane
/// proving BN254 keys alone never builds BLS12-381's pipelines).
pub(crate) struct Provers {
    ctx: GpuContext,
    bn254: Option<GpuProver<Bn254>>,
    bls12_381: Option<GpuProver<Bls12_381>>,
}

impl Provers {
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        Self {
            ctx: ctx.clone(),
            bn254: None,
            bls12_381: None,
        }
    }

    /// The device's name.
    pub(crate) fn device(&self) -> &str {
        &self.ctx.info().name
    }
}

/// What the service needs of a curve beyond reading its files: its slot in [`Values`],
/// [`Prepared`] and [`Provers`].
pub(crate) trait ServiceCurve: CircomCurve {
    fn prepared(key: PreparedProvingKey<Self>) -> Prepared;
    fn values(v: Values) -> Option<Vec<Self::ScalarField>>;
    fn slot(p: &mut Provers) -> &mut Option<GpuProver<Self>>;

    /// The lane's prover of this curve, made on first use.
    fn prover(p: &mut Provers) -> Result<&GpuProver<Self>, ProveError> {
        let ctx = p.ctx.clone();
        let slot = Self::slot(p);
        if slot.is_none() {
            *slot = Some(GpuProver::new(&ctx)?);
        }
        Ok(slot.as_ref().expect("made above"))
    }
}

macro_rules! service_curve {
    ($e:ty, $variant:ident, $field:ident) => {
        impl ServiceCurve for $e {
            fn prepared(key: PreparedProvingKey<Self>) -> Prepared {
                Prepared::$variant(Box::new(key))
            }

            fn values(v: Values) -> Option<Vec<Self::ScalarField>> {
                match v {
                    Values::$variant(v) => Some(v),
                    _ => None,
                }
            }

            fn slot(p: &mut Provers) -> &mut Option<GpuProver<Self>> {
                &mut p.$field
            }
        }
    };
}

service_curve!(Bn254, Bn254, bn254);
service_curve!(Bls12_381, Bls12_381, bls12_381);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn witnesses_read_over_their_curve_and_round_trip() {
        for curve in Curve::ALL {
            let w = match curve {
                Curve::Bn254 => Values::Bn254(vec![1u64.into(), 5u64.into()]),
                Curve::Bls12_381 => Values::Bls12_381(vec![1u64.into(), 5u64.into()]),
            };
            let bytes = w.to_wtns();
            let back = Values::read(curve, &bytes, false).unwrap();
            assert_eq!((back.len(), back.starts_with_one()), (2, true));
            assert_eq!(back.to_wtns(), bytes);
            assert_eq!(zkgpu_circom::wtns_curve(&bytes).unwrap(), curve);
            let json = Values::read(curve, br#"["1", "5"]"#, true).unwrap();
            assert_eq!(json.to_wtns(), bytes);
            // The other curve's reader refuses it.
            let other = Curve::ALL.into_iter().find(|c| *c != curve).unwrap();
            assert!(Values::read(other, &bytes, false).is_err());
        }
        assert!(Values::read(Curve::Bn254, &[0xff, 0xfe], true).is_err());
        let zero_first = Values::read(Curve::Bn254, br#"["0"]"#, true).unwrap();
        assert!(!zero_first.starts_with_one());
    }
}
