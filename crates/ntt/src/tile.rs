//! The pass's workgroup tile: which tiles an engine may take on its device.

use crate::engine::GpuNtt;
use crate::plan::MAX_PASS_BITS;
use crate::{NttError, NttField, Result};
use zkgpu_shaders::NttTile;

impl<F: NttField> GpuNtt<F> {
    /// Transforms with the tile of `2^log` elements ([`NttConfig::tile_log`](crate::NttConfig::tile_log)): an
    /// [`NttError::Tile`] where there is no such tile or the device cannot run it.
    pub fn with_tile_log(mut self, log: u32) -> Result<Self> {
        let arith = self.pass_module.arith;
        let tile = NttTile::of_log(log).ok_or_else(|| NttError::Tile {
            log,
            reason: format!(
                "the pass is composed with tiles of 2^{}..=2^{} elements",
                NttTile::SMALL.log,
                MAX_PASS_BITS
            ),
        })?;
        self.check_tile(tile, arith)?;
        self.tile = tile;
        self.config.tile_log = Some(log);
        self.pass_module = zkgpu_shaders::ntt_tiled(F::MODULE, arith, tile);
        Ok(self)
    }

    /// The workgroup tile the passes use: [`NttTile::SMALL`] unless [`NttConfig::tile_log`](crate::NttConfig::tile_log)
    /// chose another.
    pub fn tile(&self) -> NttTile {
        self.tile
    }

    /// Whether the device runs `tile` in `arith`'s element form: its workgroup memory and
    /// invocations within the device's limits.
    pub(crate) fn check_tile(&self, tile: NttTile, arith: zkgpu_runtime::Arith) -> Result<()> {
        let limits = self.ctx.limits();
        let bytes = tile.workgroup_bytes(F::MODULE, arith);
        let reason = if bytes > u64::from(limits.max_compute_workgroup_storage_size) {
            format!(
                "it needs {bytes} bytes of workgroup memory in {}, the device allows {}",
                arith.name(),
                limits.max_compute_workgroup_storage_size
            )
        } else if tile.wg > limits.max_compute_invocations_per_workgroup
            || tile.wg > limits.max_compute_workgroup_size_x
        {
            format!(
                "it needs {} invocations a workgroup, the device allows {}",
                tile.wg,
                limits
                    .max_compute_invocations_per_workgroup
                    .min(limits.max_compute_workgroup_size_x)
            )
        } else {
            return Ok(());
        };
        Err(NttError::Tile {
            log: tile.log,
            reason,
        })
    }

    /// Bits one pass transforms at most: the configured maximum within the tile.
    pub(crate) fn pass_bits(&self) -> u32 {
        self.config.max_pass_bits.min(self.tile.log)
    }
}
