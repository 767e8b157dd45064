//! The groups zkgpu runs on: [`Group`] and `for_each_group!`, the registry `zkgpu-shaders`
//! keeps (one line per group), tied here to the [`crate::GpuCurve`] types, which are named as
//! the variants: the dispatch from a runtime choice to a type ([`with_group!`](crate::with_group)),
//! the command-line names, the benchmarks' lists and the test macros derive from it.

pub use zkgpu_shaders::Group;

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
