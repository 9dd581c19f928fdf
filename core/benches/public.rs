//! Public IDs (issue 14): `PublicIds::encode` + `decode` (Speck64/128 both ways and base62)
//! next to the plain `encode(id, base62)` and its round trip with `decode_str`. The target is
//! a public round trip within 3x of `encode(id, base62)`. Run:
//! `cargo bench -p snowflake-core --features public-ids --bench public`.

use criterion::{criterion_group, criterion_main, Criterion};
use snowflake_core::{decode_str, encode, Encoding, PublicIds};
use std::hint::black_box;

fn public_ids(c: &mut Criterion) {
    let mut g = c.benchmark_group("public_ids");
    let ids = PublicIds::new(*b"a 128-bit secret");
    // Consecutive IDs, as a generator hands them out.
    let mut id = 1724551110456389632u64;
    g.bench_function("encode(id, base62)", |b| {
        b.iter(|| {
            id += 1;
            black_box(encode(black_box(id), Encoding::Base62, false))
        })
    });
    g.bench_function("encode(id, base62) + decode_str", |b| {
        b.iter(|| {
            id += 1;
            let text = encode(black_box(id), Encoding::Base62, false);
            black_box(decode_str(black_box(&text), Encoding::Base62, false).unwrap())
        })
    });
    g.bench_function("Speck64/128 encrypt alone", |b| {
        b.iter(|| {
            id += 1;
            black_box(ids.encrypt(black_box(id)))
        })
    });
    g.bench_function("PublicIds::encode", |b| {
        b.iter(|| {
            id += 1;
            black_box(ids.encode(black_box(id)))
        })
    });
    g.bench_function("PublicIds::encode + decode", |b| {
        b.iter(|| {
            id += 1;
            let text = ids.encode(black_box(id));
            black_box(ids.decode(black_box(&text)).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, public_ids);
criterion_main!(benches);
