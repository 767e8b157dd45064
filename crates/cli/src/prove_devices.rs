//! `zkgpu prove --stream N --devices ...`: the prover and the proving key on every device of
//! the set after the first, for the stream across them.

use std::path::Path;

use ark_groth16::ProvingKey;
use zkgpu_groth16::{GpuPairing, GpuProver, PreparedProvingKey};
use zkgpu_runtime::{DeviceSet, GpuContext};

use crate::prove_report::Step;
use crate::prove_start::with_pipelines;

type BoxError = Box<dyn std::error::Error>;
/// Each further device's prover and key.
type Lanes<E> = Vec<(GpuProver<E>, PreparedProvingKey<E>)>;

/// The prover of a device's context, with the command line's settings.
pub(crate) type Configure<'a, E> = dyn Fn(&GpuContext) -> Result<GpuProver<E>, String> + Sync + 'a;

/// A prover (from `configure`) and the key on each device of `set` but the first (all at
/// once, one host thread each): the key from its cache file where the first device's key has
/// a hash and the file is there, else prepared from the arkworks key; pipelines built beside
/// it.
pub(crate) fn other_lanes<E: GpuPairing>(
    set: &DeviceSet,
    configure: &Configure<'_, E>,
    first: &PreparedProvingKey<E>,
    pk: Option<&ProvingKey<E>>,
    dir: Option<&Path>,
) -> Result<Lanes<E>, BoxError> {
    let others = &set.contexts()[1..];
    let step = Step::new(format!(
        "the key on {} more device(s) (pipelines built meanwhile)",
        others.len()
    ));
    let lanes = std::thread::scope(|scope| {
        let handles: Vec<_> = others
            .iter()
            .map(|ctx| {
                scope.spawn(move || -> Result<_, String> {
                    let prover = configure(ctx)?;
                    let (key, pipes) = with_pipelines(&prover, || key_on(&prover, first, pk, dir));
                    pipes.map_err(|e| e.to_string())?;
                    Ok((prover, key?))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a device's start panicked".into()))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    step.done("");
    Ok(lanes)
}

/// The key on `prover`'s device: from the cache, else from the arkworks key.
fn key_on<E: GpuPairing>(
    prover: &GpuProver<E>,
    first: &PreparedProvingKey<E>,
    pk: Option<&ProvingKey<E>>,
    dir: Option<&Path>,
) -> Result<PreparedProvingKey<E>, String> {
    if let (Some(d), Some(h)) = (dir, first.key_hash()) {
        let path = prover.cache_file(d, &h);
        if path.exists() {
            match prover.load_prepared(&path, Some(&h)) {
                Ok(k) => return Ok(k),
                Err(e) => eprintln!("{} refused ({e}): preparing the key", path.display()),
            }
        }
    }
    let pk = pk.ok_or(
        "no cached prepared key for the other devices and no proving key (run without \
         --no-reference, or with the cache)",
    )?;
    prover.prepare(pk).map_err(|e| e.to_string())
}
