// Layouts the MSM's bucket kernels (msm_buckets.wgsl) write and its accumulation kernels
// (msm_accumulate.wgsl) and crates/msm read: composed into both modules, and read by the Rust
// side through zkgpu_shaders::contract.

// Words of one indirect dispatch's arguments in `dispatch_args`: x, y, z.
const DISPATCH_WORDS: u32 = 3u;
// Words of the combine list before its bucket slots: the listed buckets of zero or 2..=group
// chunks, the most chunks of one, and the listed buckets of more than `group` chunks (the
// chunk tree's). Those come first in the slots, the others from the last slot backwards.
const COMBINE_LIST_HEADER: u32 = 3u;
// Words of one entry of the chunk order: the bucket slot plus one (0: no chunk), the chunk's
// index in its bucket, and chunk_word (its entries and its bucket's chunk length).
const CHUNK_ORDER_WORDS: u32 = 3u;

// A chunk order entry's third word: the chunk's entries and its bucket's chunk length (the
// host keeps chunk lengths below 2^16).
fn chunk_word(entries: u32, len: u32) -> u32 {
    return entries | (len << 16u);
}

// Most invocations of one tree level's dispatch; each loops over what is beyond.
const MAX_LEVEL_THREADS: u32 = 4194304u;

// Whether a tree level's (bucket, group) pairs, `large` buckets of at most `per` groups, are
// numbered in one index below 2^31 (else the level loops over buckets and groups apart).
fn level_is_linear(large: u32, per: u32) -> bool {
    return per != 0u && large <= 0x7fffffffu / per;
}
