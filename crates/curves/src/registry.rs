//! The groups zkgpu runs on: [`Group`] and `for_each_group!`, the registry `zkgpu-shaders`
//! keeps (one line per group), tied here to the [`crate::GpuCurve`] types, which are named as
//! the variants: the dispatch from a runtime choice to a type ([`with_group!`](crate::with_group)),
//! the command-line names, the benchmarks' lists and the test macros derive from it.

pub use zkgpu_shaders::Group;

use ark_ec::short_weierstrass::Projective as SwProjective;

/// Evaluates `$body` with the type alias `$C` bound to `$group`'s [`crate::GpuCurve`] type:
/// `with_group!(group, C => run::<C>(args))`.
#[macro_export]
macro_rules! with_group {
    ($group:expr, $C:ident => $body:expr) => {
        $crate::for_each_group!($crate::__with_group_match, $group, $C, $body)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __with_group_match {
    ($group:expr, $C:ident, $body:expr ; $(($G:ident, $m:ident))*) => {
        match $group {
            $($crate::Group::$G => {
                type $C = $crate::$G;
                $body
            })*
        }
    };
}

/// An arkworks projective group that zkgpu runs on the GPU (`ark_bls12_381::G1Projective`,
/// `ark_bn254::G2Projective`, `ark_ed_on_bls12_377::EdwardsProjective`, ...), and the zkgpu
/// type of that group: what lets the engines take arkworks' own types (the MSM's
/// `GpuVariableBaseMsm`). Implemented for every group of the registry.
pub trait OnGpu: ark_ec::CurveGroup {
    /// The zkgpu type of this group.
    type Curve: crate::GpuCurve<Projective = Self, Affine = Self::Affine, Scalar = Self::ScalarField>;
}

macro_rules! on_gpu {
    ($($ark:ty => $G:ident),* $(,)?) => {
        $(impl OnGpu for $ark {
            type Curve = crate::$G;
        })*
    };
}
// The curves' configuration types, not arkworks' aliases (`G1Projective` names a projection
// through `Bls12Config`, which coherence cannot tell apart).
on_gpu!(
    SwProjective<ark_bls12_381::g1::Config> => Bls12_381G1,
    SwProjective<ark_bls12_381::g2::Config> => Bls12_381G2,
    SwProjective<ark_bls12_377::g1::Config> => Bls12_377G1,
    SwProjective<ark_bls12_377::g2::Config> => Bls12_377G2,
    SwProjective<ark_bn254::g1::Config> => Bn254G1,
    SwProjective<ark_bn254::g2::Config> => Bn254G2,
    ark_ec::twisted_edwards::Projective<ark_ed_on_bls12_377::EdwardsConfig> => EdOnBls12_377,
);

/// Fails to compile when a group of the registry has no [`OnGpu`] line above.
macro_rules! every_group_on_gpu {
    (; $(($G:ident, $m:ident))*) => {
        const _: fn() = || {
            fn on_gpu<G: OnGpu>() {}
            $(on_gpu::<<crate::$G as crate::GpuCurve>::Projective>();)*
        };
    };
}
crate::for_each_group!(every_group_on_gpu);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GpuCurve;

    macro_rules! listed {
        (; $(($G:ident, $m:ident))*) => {
            vec![$((Group::$G, <crate::$G as GpuCurve>::GROUP, stringify!($m))),*]
        };
    }

    #[test]
    fn arkworks_types_map_to_their_groups() {
        fn group_of<G: OnGpu>() -> Group {
            <G::Curve as GpuCurve>::GROUP
        }
        assert_eq!(
            group_of::<ark_bls12_381::G1Projective>(),
            Group::Bls12_381G1
        );
        assert_eq!(
            group_of::<ark_bls12_381::G2Projective>(),
            Group::Bls12_381G2
        );
        assert_eq!(
            group_of::<ark_bls12_377::G1Projective>(),
            Group::Bls12_377G1
        );
        assert_eq!(
            group_of::<ark_bls12_377::G2Projective>(),
            Group::Bls12_377G2
        );
        assert_eq!(group_of::<ark_bn254::G1Projective>(), Group::Bn254G1);
        assert_eq!(group_of::<ark_bn254::G2Projective>(), Group::Bn254G2);
        assert_eq!(
            group_of::<ark_ed_on_bls12_377::EdwardsProjective>(),
            Group::EdOnBls12_377
        );
    }

    #[test]
    fn the_type_list_is_the_registry() {
        let listed = crate::for_each_group!(listed);
        assert_eq!(listed.len(), Group::ALL.len());
        for ((g, typed, module), want) in listed.into_iter().zip(Group::ALL) {
            assert_eq!((g, typed), (*want, *want));
            assert_eq!(module, want.id());
        }
    }

    #[test]
    fn names_round_trip_and_dispatch_reaches_each_type() {
        for &g in Group::ALL {
            assert_eq!(Group::from_name(g.name()), Ok(g));
            let id = crate::with_group!(g, C => C::ID);
            assert_eq!(id, g.id());
            assert_eq!(id, g.name().replace('-', "_"));
        }
        assert!(
            Group::from_name("bn254-g3")
                .unwrap_err()
                .contains("bn254-g2")
        );
    }
}
