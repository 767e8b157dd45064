//! The registry of the groups zkgpu runs on: one entry per group, from which the command-line
//! names, the benchmarks' group lists and the dispatch from a runtime choice to the generic
//! code derive ([`with_group!`](crate::with_group)).

use std::fmt;

/// A group zkgpu runs on, chosen at run time (a command-line flag, an environment list); the
/// generic code takes the matching [`crate::GpuCurve`] type through [`crate::with_group!`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// BLS12-381 G1 ([`crate::Bls12_381G1`]).
    Bls12_381G1,
    /// BLS12-381 G2 ([`crate::Bls12_381G2`]).
    Bls12_381G2,
    /// BLS12-377 G1 ([`crate::Bls12_377G1`]).
    Bls12_377G1,
    /// BLS12-377 G2 ([`crate::Bls12_377G2`]).
    Bls12_377G2,
    /// ed-on-bls12-377 ([`crate::EdOnBls12_377`]).
    EdOnBls12_377,
}

impl Group {
    /// Every group, in the order tables list them.
    pub const ALL: [Group; 5] = [
        Group::Bls12_381G1,
        Group::Bls12_381G2,
        Group::Bls12_377G1,
        Group::Bls12_377G2,
        Group::EdOnBls12_377,
    ];

    /// The name users type: `bls12-381-g1`, ..., `ed-on-bls12-377`.
    pub fn name(self) -> &'static str {
        match self {
            Group::Bls12_381G1 => "bls12-381-g1",
            Group::Bls12_381G2 => "bls12-381-g2",
            Group::Bls12_377G1 => "bls12-377-g1",
            Group::Bls12_377G2 => "bls12-377-g2",
            Group::EdOnBls12_377 => "ed-on-bls12-377",
        }
    }

    /// The group named `name` ([`Group::name`]), or an error listing the names.
    pub fn from_name(name: &str) -> Result<Group, String> {
        Group::ALL
            .into_iter()
            .find(|g| g.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Group::ALL.iter().map(|g| g.name()).collect();
                format!("unknown group {name:?}; one of {}", names.join(", "))
            })
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Evaluates `$body` with the type alias `$C` bound to `$group`'s [`crate::GpuCurve`] type:
/// `with_group!(group, C => run::<C>(args))`.
#[macro_export]
macro_rules! with_group {
    ($group:expr, $C:ident => $body:expr) => {
        match $group {
            $crate::Group::Bls12_381G1 => {
                type $C = $crate::Bls12_381G1;
                $body
            }
            $crate::Group::Bls12_381G2 => {
                type $C = $crate::Bls12_381G2;
                $body
            }
            $crate::Group::Bls12_377G1 => {
                type $C = $crate::Bls12_377G1;
                $body
            }
            $crate::Group::Bls12_377G2 => {
                type $C = $crate::Bls12_377G2;
                $body
            }
            $crate::Group::EdOnBls12_377 => {
                type $C = $crate::EdOnBls12_377;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GpuCurve;

    #[test]
    fn names_round_trip_and_dispatch_reaches_each_type() {
        for g in Group::ALL {
            assert_eq!(Group::from_name(g.name()), Ok(g));
            // The dispatched type is the group's: its ID is the name with underscores.
            let id = crate::with_group!(g, C => C::ID);
            assert_eq!(id, g.name().replace('-', "_"));
        }
        assert!(
            Group::from_name("bn254-g1")
                .unwrap_err()
                .contains("ed-on-bls12-377")
        );
    }
}
