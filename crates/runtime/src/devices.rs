//! [`DeviceSet`]: several GPU contexts of one host, one per adapter (or several on one
//! adapter, for tests), for engines that split work across devices.

use crate::adapter::type_rank;
use crate::context::{ContextOptions, GpuContext};
use crate::error::{GpuError, Result};

/// Which adapters a [`DeviceSet`] opens (`--devices`, `ZKGPU_DEVICES`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// Every suitable adapter: those of the best device type present (discrete GPUs where
    /// there are any, a software adapter only where there is nothing else) on the first
    /// backend that has one, so one GPU seen through two backends counts once.
    All,
    /// The first this many suitable adapters; an error where there are fewer.
    Count(usize),
    /// These adapters by their place in wgpu's list (`zkgpu info`), in this order; one may be
    /// named twice (two contexts on one device, as the tests do without a GPU).
    Indices(Vec<usize>),
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;

    /// `all`, a count `N` (at least 1), or `adapters:I,J,...`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(Self::All);
        }
        if let Some(list) = s.strip_prefix("adapters:") {
            let indices = list
                .split(',')
                .map(|i| i.trim().parse::<usize>())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| format!("{s:?}: adapter numbers expected ({e})"))?;
            return Ok(Self::Indices(indices));
        }
        match s.parse::<usize>() {
            Ok(0) => Err("0 devices: ask for at least 1".into()),
            Ok(n) => Ok(Self::Count(n)),
            Err(_) => Err(format!(
                "{s:?}: expected `all`, a count, or `adapters:I,J,...` (numbers of `zkgpu info`)"
            )),
        }
    }
}

impl DeviceChoice {
    /// The choice in `ZKGPU_DEVICES`, or `default` where it is unset or empty.
    pub fn from_env_or(default: Self) -> Result<Self> {
        match std::env::var("ZKGPU_DEVICES") {
            Ok(v) if !v.trim().is_empty() => v.parse().map_err(|reason| GpuError::BadEnv {
                var: "ZKGPU_DEVICES",
                value: v,
                reason,
            }),
            _ => Ok(default),
        }
    }
}

/// One [`GpuContext`] per device of a host (each with its own device, queue, pipelines and
/// pipeline cache). Never empty. Engines of several devices (`zkgpu_msm::MultiMsm`, the
/// Groth16 stream's lanes) take one.
#[derive(Clone, Debug)]
pub struct DeviceSet {
    contexts: Vec<GpuContext>,
}

impl DeviceSet {
    /// Opens the adapters `choice` names with `opts` (its limits, backends and pipeline
    /// cache for each; its adapter name narrows `All` and `Count`).
    pub async fn open(opts: ContextOptions, choice: &DeviceChoice) -> Result<Self> {
        let indices = match choice {
            DeviceChoice::Indices(list) if list.is_empty() => {
                return Err(GpuError::NoAdapter {
                    hint: "an empty list of adapters".into(),
                });
            }
            DeviceChoice::Indices(list) => list.clone(),
            DeviceChoice::All | DeviceChoice::Count(_) => {
                let found = suitable(&opts).await;
                let want = match choice {
                    DeviceChoice::Count(n) => *n,
                    _ => found.len().max(1),
                };
                if found.len() < want {
                    return Err(GpuError::NoAdapter {
                        hint: format!(
                            "{want} device(s) asked for, {} suitable adapter(s) found on backends {:?} (`zkgpu info` lists them)",
                            found.len(),
                            opts.backends
                        ),
                    });
                }
                found.into_iter().take(want).collect()
            }
        };
        let mut contexts = Vec::with_capacity(indices.len());
        for i in indices {
            let ctx = GpuContext::new(ContextOptions {
                adapter_index: Some(i),
                ..opts.clone()
            })
            .await?;
            contexts.push(ctx);
        }
        Ok(Self { contexts })
    }

    /// [`DeviceSet::open`], blocking.
    pub fn open_blocking(opts: ContextOptions, choice: &DeviceChoice) -> Result<Self> {
        pollster::block_on(Self::open(opts, choice))
    }

    /// A set of the contexts given (at least one), e.g. one already open.
    pub fn from_contexts(contexts: Vec<GpuContext>) -> Result<Self> {
        if contexts.is_empty() {
            return Err(GpuError::NoAdapter {
                hint: "a device set of no contexts".into(),
            });
        }
        Ok(Self { contexts })
    }

    /// The contexts, one per device, in the order opened.
    pub fn contexts(&self) -> &[GpuContext] {
        &self.contexts
    }

    /// How many devices.
    pub fn len(&self) -> usize {
        self.contexts.len()
    }

    /// Always false: a set holds at least one context.
    pub fn is_empty(&self) -> bool {
        self.contexts.is_empty()
    }
}

/// The places in wgpu's adapter list of the suitable adapters ([`DeviceChoice::All`]).
async fn suitable(opts: &ContextOptions) -> Vec<usize> {
    let adapters = GpuContext::adapters(opts.backends).await;
    let wanted = opts.adapter_name.as_ref().map(|n| n.to_lowercase());
    let named: Vec<(usize, &wgpu::AdapterInfo)> = adapters
        .iter()
        .enumerate()
        .map(|(i, (info, _))| (i, info))
        .filter(|(_, info)| {
            wanted
                .as_ref()
                .is_none_or(|n| info.name.to_lowercase().contains(n))
        })
        .collect();
    let Some(best) = named.iter().map(|(_, a)| type_rank(a.device_type)).min() else {
        return Vec::new();
    };
    let of_type = || {
        named
            .iter()
            .filter(move |(_, a)| type_rank(a.device_type) == best)
    };
    let Some(backend) = [
        wgpu::Backend::Vulkan,
        wgpu::Backend::Metal,
        wgpu::Backend::Dx12,
        wgpu::Backend::Gl,
        wgpu::Backend::BrowserWebGpu,
        wgpu::Backend::Noop,
    ]
    .into_iter()
    .find(|b| of_type().any(|(_, a)| a.backend == *b)) else {
        return Vec::new();
    };
    of_type()
        .filter(|(_, a)| a.backend == backend)
        .map(|(i, _)| *i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::DeviceChoice;

    #[test]
    fn choices_parse_and_bad_ones_are_refused() {
        assert_eq!("all".parse(), Ok(DeviceChoice::All));
        assert_eq!(" ALL ".parse(), Ok(DeviceChoice::All));
        assert_eq!("2".parse(), Ok(DeviceChoice::Count(2)));
        assert_eq!(
            "adapters:0,0".parse(),
            Ok(DeviceChoice::Indices(vec![0, 0]))
        );
        assert_eq!("adapters:3".parse(), Ok(DeviceChoice::Indices(vec![3])));
        for bad in ["0", "", "two", "adapters:", "adapters:a", "-1", "1,2"] {
            assert!(bad.parse::<DeviceChoice>().is_err(), "{bad:?} accepted");
        }
    }
}
