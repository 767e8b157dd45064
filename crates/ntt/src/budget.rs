//! What the engine allocates for a transform size under a storage binding limit, computed
//! without a device: the data and scratch pages and the plans' tables. Tests walk it over
//! every size under WebGPU's default limits (and the prover's walk adds the MSMs').

use crate::data::page_elements;
use crate::plan::{MAX_PASS_BITS, plan_bytes};
use crate::{DEFAULT_MAX_TWIST_LOG, Direction, ELEMENT_BYTES, Result};

/// log2 of the elements per page: the largest power of two whose bytes fit a binding of
/// `max_binding` bytes, at most 2^31.
pub(crate) fn page_log_for(max_binding: u64) -> u32 {
    let max = max_binding / ELEMENT_BYTES;
    (63 - max.max(2).leading_zeros()).min(31)
}

/// Every buffer (name, bytes) an engine of default settings allocates for `batch` vectors of
/// `2^log_n` elements and their forward, inverse and coset transforms, on a device whose
/// storage bindings hold `max_binding` bytes; an error where the batch cannot be bound (more
/// pages than the kernels bind), the one the engine gives.
pub fn buffer_plan(log_n: u32, batch: usize, max_binding: u64) -> Result<Vec<(String, u64)>> {
    let page_log = page_log_for(max_binding);
    let pages = page_elements(1usize << log_n, batch, page_log)?;
    let mut out = Vec::new();
    for (k, elems) in pages.iter().enumerate() {
        out.push((format!("ntt data page {k}"), elems * ELEMENT_BYTES));
        out.push((format!("ntt scratch page {k}"), elems * ELEMENT_BYTES));
    }
    for (what, dir, coset) in [
        ("forward", Direction::Forward, false),
        ("inverse", Direction::Inverse, false),
        ("coset forward", Direction::Forward, true),
        ("coset inverse", Direction::Inverse, true),
    ] {
        let p = plan_bytes(
            log_n,
            dir,
            coset,
            MAX_PASS_BITS,
            DEFAULT_MAX_TWIST_LOG,
            max_binding,
        );
        out.push((format!("ntt {what} twiddles"), p.tables));
        if p.twists > 0 {
            out.push((format!("ntt {what} twists"), p.twists));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under WebGPU's default 128 MiB binding, every buffer of every transform size fits,
    /// and a batch is refused (typed) exactly where it needs more than the kernels' pages.
    #[test]
    fn every_ntt_buffer_plan_fits_webgpu_default_limits() {
        let max = zkgpu_runtime::wgpu::Limits::default().max_storage_buffer_binding_size;
        for log_n in 1..=24u32 {
            for batch in [1usize, 3, 7] {
                let need = (batch as u64) << log_n;
                let pages = need.div_ceil(max / ELEMENT_BYTES);
                match buffer_plan(log_n, batch, max) {
                    Ok(plan) => {
                        assert!(pages <= crate::MAX_PAGES as u64, "2^{log_n} x {batch}");
                        for (name, bytes) in plan {
                            assert!(bytes <= max, "2^{log_n} x {batch}: {name} {bytes}");
                        }
                    }
                    Err(e) => {
                        assert!(pages > crate::MAX_PAGES as u64, "2^{log_n} x {batch}: {e}");
                        assert!(e.to_string().contains("storage bindings"), "{e}");
                    }
                }
            }
        }
        assert_eq!(page_log_for(max), 22);
        assert!(buffer_plan(22, 3, max).is_ok());
        assert!(buffer_plan(23, 3, max).is_err());
        assert!(buffer_plan(23, 1, max).is_ok());
        assert!(buffer_plan(24, 1, max).is_err());
    }
}
