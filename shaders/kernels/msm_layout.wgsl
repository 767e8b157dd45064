// Layouts the MSM's bucket kernels (msm_buckets.wgsl) write and its accumulation kernels
// (msm_accumulate.wgsl) and crates/msm read: composed into both modules, and read by the Rust
// side through zkgpu_shaders::contract.

// Words of one indirect dispatch's arguments in `dispatch_args`: x, y, z.
const DISPATCH_WORDS: u32 = 3u;
// Words of the combine list before its bucket slots: the buckets listed, the most chunks of
// one, and the first bin's chunks.
const COMBINE_LIST_HEADER: u32 = 3u;
// Words of one entry of the chunk order: the bucket slot plus one (0: no chunk), the chunk's
// index in its bucket, and its length.
const CHUNK_ORDER_WORDS: u32 = 3u;
