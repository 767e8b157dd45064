// EXPERIMENT (docs/PERFORMANCE.md): XYZZ mixed addition (madd-2008-s, 8M + 2S) for a = 0
// Weierstrass curves with the additions on statically named variables and the ten
// multiplications issued in four dependency rounds (2, 2, 3, 3) through one fe_mul call site
// in a loop. General case only: no identity or P == +-Q handling, so it is correct only where
// those cannot occur (random chains); it exists to measure the shape against the curve VM.
//
// Composed after a base-field module and its `fe_` shim. Loops terminate: counters rise to
// constants or uniforms.

struct RoundsParams {
    count: u32,
    row_stride: u32,
    steps: u32,
    stream_records: u32,
}

override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(1) var<storage, read> acc_in: array<u32>;
@group(0) @binding(2) var<storage, read> points: array<u32>;
@group(0) @binding(3) var<storage, read_write> acc_out: array<u32>;
@group(0) @binding(4) var<uniform> rp: RoundsParams;

var<private> ml: array<Fe, 3>;
var<private> mr: array<Fe, 3>;
var<private> mo: array<Fe, 3>;

fn load_acc(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = acc_in[offset + j];
    }
    return fe_from_words(w);
}

fn load_point(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = points[offset + j];
    }
    return fe_from_words(w);
}

fn store_acc(offset: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        acc_out[offset + j] = w[j];
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn g1_madd_rounds_chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * rp.row_stride;
    if (i >= rp.count) {
        return;
    }
    let base = i * 4u * FE_WORDS;
    var x1 = load_acc(base);
    var y1 = load_acc(base + FE_WORDS);
    var zz1 = load_acc(base + 2u * FE_WORDS);
    var zzz1 = load_acc(base + 3u * FE_WORDS);
    for (var s = 0u; s < rp.steps; s++) {
        let rec = ((i * rp.steps + s) % max(rp.stream_records, 1u)) * 2u * FE_WORDS;
        let x2 = load_point(rec);
        let y2 = load_point(rec + FE_WORDS);
        var p: Fe;
        var r: Fe;
        var rr: Fe;
        for (var round = 0u; round < 4u; round++) {
            var n = 0u;
            switch round {
                case 0u: {
                    // U2 = x2 ZZ1, S2 = y2 ZZZ1
                    ml[0] = x2;
                    mr[0] = zz1;
                    ml[1] = y2;
                    mr[1] = zzz1;
                    n = 2u;
                }
                case 1u: {
                    // P = U2 - X1, R = S2 - Y1; PP = P^2, RR = R^2
                    p = fe_sub(mo[0], x1);
                    r = fe_sub(mo[1], y1);
                    ml[0] = p;
                    mr[0] = p;
                    ml[1] = r;
                    mr[1] = r;
                    n = 2u;
                }
                case 2u: {
                    // PPP = P PP, Q = X1 PP, ZZ3 = ZZ1 PP
                    rr = mo[1];
                    let pp = mo[0];
                    ml[0] = p;
                    mr[0] = pp;
                    ml[1] = x1;
                    mr[1] = pp;
                    ml[2] = zz1;
                    mr[2] = pp;
                    n = 3u;
                }
                default: {
                    // X3 = RR - PPP - 2Q; ZZZ3 = ZZZ1 PPP, Y1 PPP, R (Q - X3)
                    let ppp = mo[0];
                    let q = mo[1];
                    zz1 = mo[2];
                    x1 = fe_sub(fe_sub(rr, ppp), fe_double(q));
                    ml[0] = zzz1;
                    mr[0] = ppp;
                    ml[1] = y1;
                    mr[1] = ppp;
                    ml[2] = r;
                    mr[2] = fe_sub(q, x1);
                    n = 3u;
                }
            }
            for (var k = 0u; k < n; k++) {
                mo[k] = fe_mul(ml[k], mr[k]);
            }
        }
        zzz1 = mo[0];
        y1 = fe_sub(mo[2], mo[1]);
    }
    store_acc(base, x1);
    store_acc(base + FE_WORDS, y1);
    store_acc(base + 2u * FE_WORDS, zz1);
    store_acc(base + 3u * FE_WORDS, zzz1);
}
