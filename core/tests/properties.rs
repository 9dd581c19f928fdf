//! Property tests: round trips, order, and "malformed input is an error, never a panic".

use proptest::prelude::*;
use snowflake_core::{decode_str, encode, Encoding, Generator, Layout, ManualClock, Options, ParseIdError};

fn encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(Encoding::ALL.to_vec())
}

/// Valid layouts: time first, one sequence somewhere below it, node fields, at most 64 bits.
fn layout() -> impl Strategy<Value = Layout> {
    (
        1u8..=44,
        1u8..=22,
        prop::collection::vec(1u8..=16, 0..5),
        any::<prop::sample::Index>(),
        0u64..2_000_000_000_000,
        prop::sample::select(vec!["1ms", "10ms", "1s", "7ms"]),
    )
        .prop_filter_map("too wide", |(time, seq, nodes, at, epoch, tick)| {
            let total: u32 =
                u32::from(time) + u32::from(seq) + nodes.iter().map(|&b| u32::from(b)).sum::<u32>();
            if total > 64 {
                return None;
            }
            let mut fields: Vec<String> =
                nodes.iter().enumerate().map(|(i, b)| format!("n{i}:{b}")).collect();
            fields.insert(at.index(fields.len() + 1), format!("sequence:{seq}"));
            let spec = format!("time:{time},{};epoch={epoch};tick={tick}", fields.join(","));
            Layout::parse(&spec).ok()
        })
}

proptest! {
    // A few thousand cases of each: random specs, node values, option texts, ID strings and
    // encodings through core in every test run (issue 13), a few seconds in all.
    #![proptest_config(ProptestConfig { cases: 2000, max_global_rejects: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn encodings_round_trip(id: u64, e in encoding(), reverse: bool) {
        let text = encode(id, e, reverse);
        prop_assert_eq!(decode_str(&text, e, reverse), Ok(id));
        if let Some(w) = e.width() {
            prop_assert_eq!(text.len(), w);
        }
    }

    #[test]
    fn fixed_width_encodings_sort_like_numbers(a: u64, b: u64, e in encoding()) {
        prop_assume!(e != Encoding::Decimal);
        prop_assert_eq!(a.cmp(&b), encode(a, e, false).as_str().cmp(encode(b, e, false).as_str()));
        prop_assert_eq!(b.cmp(&a), encode(a, e, true).as_str().cmp(encode(b, e, true).as_str()), "reverse: newest first");
    }

    #[test]
    fn any_string_decodes_or_errs(s in "\\PC{0,24}", e in encoding(), reverse: bool) {
        let _ = decode_str(&s, e, reverse);
    }

    /// `decode_str` reads fixed-width texts in two halves with one check at the end: the same
    /// values and the same errors, in the same order, as reading digit by digit with a check
    /// at every step. The texts mix the alphabet (mostly) with any other ASCII byte.
    #[test]
    fn fixed_width_decoding_is_digit_by_digit(
        e in encoding(),
        picks in prop::collection::vec((0u8..6, any::<prop::sample::Index>(), 0u8..128), 16),
    ) {
        prop_assume!(e != Encoding::Decimal);
        let w = e.width().unwrap();
        let last = |d: u64| encode(d, e, false).as_bytes()[w - 1];
        let zero = last(0);
        // The alphabet, in digit order: the last character of 0, 1, ... until it wraps.
        let alphabet: Vec<u8> =
            [zero].into_iter().chain((1..).map(last).take_while(|&c| c != zero)).collect();
        let text: Vec<u8> = picks[..w]
            .iter()
            .map(|&(kind, i, byte)| if kind == 0 { byte } else { alphabet[i.index(alphabet.len())] })
            .collect();
        let text = String::from_utf8(text).unwrap();
        // A character's digit, as decode_str reads a one-digit text (for case folding and
        // Crockford's aliases), then digit by digit with a check at every step.
        let digit = |c: u8| {
            let mut one = vec![zero; w];
            one[w - 1] = c;
            decode_str(std::str::from_utf8(&one).unwrap(), e, false).ok()
        };
        let base = alphabet.len() as u64;
        let mut reference = Ok(0u64);
        for (position, c) in text.bytes().enumerate() {
            let Some(d) = digit(c) else {
                reference = Err(ParseIdError::Char { position });
                break;
            };
            match reference.map(|v| v.checked_mul(base).and_then(|v| v.checked_add(d))) {
                Ok(Some(v)) => reference = Ok(v),
                _ => {
                    reference = Err(ParseIdError::Overflow);
                    break;
                }
            }
        }
        prop_assert_eq!(decode_str(&text, e, false), reference, "{}", text);
    }

    #[test]
    fn any_spec_parses_or_errs(s in "[a-z0-9:,;=\\-TZ. ]{0,60}") {
        if let Ok(l) = Layout::parse(&s) {
            prop_assert_eq!(Layout::parse(&l.to_string()), Ok(l));
        }
    }

    #[test]
    fn any_node_and_options_text_parses_or_errs(s in "\\PC{0,40}") {
        let l = Layout::parse("twitter").unwrap();
        let _ = l.parse_node(&s);
        let _ = Options::parse(&s);
    }

    /// Issue 13: random node mappings through a generator: every node field named, or none,
    /// gives IDs carrying exactly those values; anything in between is refused, naming a
    /// missing field; nothing is silently 0.
    #[test]
    fn node_mappings_name_every_field_or_none(l in layout(), picks in prop::collection::vec((0usize..16, any::<u64>()), 0..6), rollover: bool) {
        let nodes: Vec<(usize, &str, u64)> = l.node_fields().map(|(i, f)| (i, f.name(), f.max())).collect();
        let rolled = if rollover { nodes.first().map(|n| n.1) } else { None };
        let mut pairs: Vec<(&str, u64)> = Vec::new();
        for (k, v) in picks {
            if let Some(&(_, name, max)) = nodes.get(k % nodes.len().max(1)) {
                if !pairs.iter().any(|p| p.0 == name) {
                    pairs.push((name, v & max));
                }
            }
        }
        let Ok(node) = l.node(&pairs) else { return Ok(()) };
        let options = Options { rollover: rolled.map(|r| snowflake_core::Name::new(r).unwrap()), ..Options::default() };
        let clock = ManualClock::new(l.epoch_ms());
        let made = Generator::isolated(&l, node, options, &clock);
        let named = |n: &str| pairs.iter().any(|p| p.0 == n);
        let complete = nodes.iter().all(|(_, n, _)| named(n) || Some(*n) == rolled);
        let rolled_given = rolled.is_some_and(named);
        match made {
            Ok(g) => {
                prop_assert!((pairs.is_empty() || complete) && !rolled_given, "{:?} accepted", pairs);
                let parts = l.decode(g.next_id_at(l.epoch_ms()).unwrap()).unwrap();
                for (name, v) in l.node_values(&parts.node) {
                    let want = pairs.iter().find(|p| p.0 == name).map_or(0, |p| p.1);
                    prop_assert_eq!(v, want, "{}", name);
                }
            }
            Err(e) => {
                prop_assert!(rolled_given || !(pairs.is_empty() || complete), "{:?} refused: {}", pairs, e);
                prop_assert_eq!(e.kind(), snowflake_core::ErrorKind::Value);
            }
        }
    }

    #[test]
    fn layouts_display_and_parse_back(l in layout()) {
        let text = l.to_string();
        let again = Layout::parse(&text).unwrap();
        prop_assert_eq!(again, l);
        prop_assert_eq!(again.fingerprint(), l.fingerprint());
    }

    /// The fingerprint is FNV-1a 64 of the canonical text; two layouts are equal (and hash
    /// alike) exactly when their texts are (equality compares the used fields only).
    #[test]
    fn fingerprints_and_equality_follow_the_canonical_text(a in layout(), b in layout()) {
        let fnv = |s: &str| s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, c| (h ^ u64::from(c)).wrapping_mul(0x0000_0100_0000_01b3));
        prop_assert_eq!(a.fingerprint(), fnv(&a.to_string()));
        prop_assert_eq!(a == b, a.to_string() == b.to_string());
        let hash = |l: &Layout| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            l.hash(&mut h);
            h.finish()
        };
        let b_again = Layout::parse(&b.to_string()).unwrap();
        prop_assert_eq!(hash(&b), hash(&b_again));
    }

    #[test]
    fn decode_then_compose_is_the_identity(l in layout(), raw: u64) {
        let id = raw & l.max_value();
        let p = l.decode(id).unwrap();
        prop_assert_eq!(l.compose(p.unix_ms, &p.node, p.sequence), Ok(id));
        prop_assert!(l.min_id(p.unix_ms).unwrap() <= id && id <= l.max_id(p.unix_ms).unwrap());
        if l.max_value() < u64::MAX {
            prop_assert!(l.decode(l.max_value() + 1).is_err());
        }
    }

    #[test]
    fn generated_ids_increase_and_decode_to_the_node(l in layout(), readings in prop::collection::vec(0u64..5000, 1..200)) {
        let start = l.epoch_ms() + 1_000_000;
        prop_assume!(start + 10_000 < l.last_unix_ms());
        let node_pairs: Vec<(String, u64)> = l.node_fields().map(|(_, f)| (f.name().to_string(), f.max() / 2)).collect();
        let pairs: Vec<(&str, u64)> = node_pairs.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let node = l.node(&pairs).unwrap();
        let g = Generator::isolated(&l, node, Options { max_drift_ms: 1000, max_wait_ms: 0, ..Options::DEFAULT }, ManualClock::new(0)).unwrap();
        let mut last = None;
        let mut sorted_readings = readings;
        sorted_readings.sort_unstable();
        for r in sorted_readings {
            if let Ok(id) = g.next_id_at(start + r) {
                prop_assert!(last.is_none_or(|p| id > p));
                last = Some(id);
                let parts = l.decode(id).unwrap();
                prop_assert_eq!(parts.node, node);
            }
        }
    }

    /// `next_id` (its one-ID fast path, on a clock it reads) issues exactly what the general
    /// path issues at the same readings (`next_id_at`, the caller's clock), whatever the
    /// clock does: forward, still, back; full ticks; every layout and policy.
    #[test]
    fn the_fast_path_issues_what_the_general_path_does(
        l in layout(),
        steps in prop::collection::vec(-3i64..4, 1..400),
        drift in prop::sample::select(vec![0u64, 2, 50]),
        spread in prop::sample::select(vec![0u64, 1, 3]),
    ) {
        let start = l.epoch_ms() + 1_000_000;
        prop_assume!(start + 10_000 < l.last_unix_ms());
        let options = Options {
            max_drift_ms: drift,
            max_wait_ms: 0,
            sequence_start: if spread == 0 { snowflake_core::SequenceStart::Zero } else { snowflake_core::SequenceStart::Spread(spread.min(l.capacity_per_tick())) },
            ..Options::DEFAULT
        };
        let clock = ManualClock::new(start);
        let live = Generator::isolated(&l, Default::default(), options.clone(), &clock).unwrap();
        let traced = Generator::isolated(&l, Default::default(), options, ManualClock::new(0)).unwrap();
        let mut now = start as i64;
        for step in steps {
            now = (now + step).max(start as i64 - 50);
            clock.set(now as u64);
            // The caller's clock behind the state is another message (BehindState) of the
            // same kind, with the same figures.
            let same = |r: Result<u64, snowflake_core::Error>| r.map_err(|e| (e.kind(), e.retry_after_ms()));
            prop_assert_eq!(same(live.next_id()), same(traced.next_id_at(now as u64)), "at {}", now);
        }
    }
}
