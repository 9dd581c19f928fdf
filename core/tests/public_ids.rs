//! Public IDs hide what a Snowflake ID tells: consecutive IDs (the worst case: one generator,
//! one millisecond) give texts with no order and no shared prefixes beyond chance; another key
//! gives other texts; every text decodes back.

use snowflake_core::{Encoding, Generator, Layout, ManualClock, Options, PublicIds};

fn consecutive(n: usize) -> Vec<u64> {
    let layout = Layout::parse("twitter").unwrap();
    let node = layout.parse_node("datacenter=1,worker=3").unwrap();
    let opts = Options { max_wait_ms: 0, isolated: true, ..Options::default() };
    let g = Generator::isolated(&layout, node, opts, ManualClock::new(1_700_000_000_000)).unwrap();
    let mut ids = vec![0u64; n];
    g.fill(&mut ids).unwrap();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "a run of consecutive IDs");
    ids
}

#[test]
fn consecutive_ids_give_unordered_texts_without_shared_prefixes() {
    let ids = consecutive(4096);
    let p = PublicIds::new(*b"0123456789abcdef");
    let texts: Vec<String> = ids.iter().map(|&id| p.encode(id).to_string()).collect();
    // Order: a sorted run would give 4095 rises; a random permutation gives about half.
    let rises = texts.windows(2).filter(|w| w[0] < w[1]).count();
    assert!((1700..=2400).contains(&rises), "{rises} rises out of 4095");
    // Prefixes: the plain base62 forms of these IDs all share 8 leading characters. Under the
    // cipher the texts are uniform below 2^64, whose base62 form starts with one of 22
    // characters (0-L) and one of about 1360 two-character prefixes: neighbours share their
    // first character about 1 time in 22 (186 expected), two characters about 1 in 1360 (3).
    let plain_shared = ids.windows(2).filter(|w| encode_prefix(w[0], 8) == encode_prefix(w[1], 8));
    assert_eq!(plain_shared.count(), 4095);
    let one = texts.windows(2).filter(|w| w[0][..1] == w[1][..1]).count();
    let two = texts.windows(2).filter(|w| w[0][..2] == w[1][..2]).count();
    assert!(one <= 260, "{one} neighbours share a first character (about 186 expected)");
    assert!(two <= 15, "{two} neighbours share two characters (about 3 expected)");
    // The leading character (the high bits, where an ID keeps its time) takes nearly all of
    // the 22 values, not one.
    let firsts: std::collections::BTreeSet<char> = texts.iter().map(|t| t.chars().next().unwrap()).collect();
    assert!(firsts.len() >= 20, "{firsts:?}");
    for (id, text) in ids.iter().zip(&texts) {
        assert_eq!(p.decode(text), Ok(*id));
    }
}

fn encode_prefix(id: u64, n: usize) -> String {
    snowflake_core::encode(id, Encoding::Base62, false)[..n].to_string()
}

#[test]
fn another_key_gives_other_texts() {
    let ids = consecutive(1000);
    let a = PublicIds::new([1; 16]);
    let mut key = [1; 16];
    key[15] ^= 1; // one bit of the key
    let b = PublicIds::new(key);
    let same = ids.iter().filter(|&&id| a.encode(id) == b.encode(id)).count();
    assert_eq!(same, 0);
    // And b's texts do not decode, under a, to the IDs they came from.
    assert!(ids.iter().all(|&id| a.decode(&b.encode(id)) != Ok(id)));
}

#[test]
fn every_fixed_width_encoding_round_trips_at_its_width() {
    for encoding in Encoding::ALL.into_iter().filter(|e| e.width().is_some()) {
        let p = PublicIds::with_encoding(*b"fixed width key!", encoding).unwrap();
        for id in [0, 1, u64::MAX, 1 << 63, 1724551110456389632] {
            let text = p.encode(id);
            assert_eq!(Some(text.len()), encoding.width());
            assert_eq!(p.decode(&text), Ok(id), "{encoding}");
        }
    }
}
