//! Bit diagrams of a layout: one column per bit of the 64, a `|` between fields, a ruler of
//! bit positions above, and (for `decode --explain`) each field's value in binary, bit under
//! bit, and in decimal below.
//!
//! ```text
//! 63 62                                     22 21 17 16 12 11        0
//! +-+-----------------------------------------+-----+-----+------------+
//! |0|                time (41)                |dc(5)|wk(5)|sequence(12)|
//! +-+-----------------------------------------+-----+-----+------------+
//! ```
//!
//! 64 bit columns plus at most 17 separators keep every layout within 81 columns. A field's
//! decimal value always fits under it: `2^b - 1` has at most `b` digits.

use snowflake_core::{FieldKind, Layout};

/// One run of bits: a field, or the unused (always zero) bits above a layout narrower than 64.
struct Segment<'a> {
    name: &'a str,
    bits: u32,
    /// The position of the lowest bit.
    shift: u32,
    unused: bool,
}

fn segments(layout: &Layout) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let total = u32::from(layout.total_bits());
    if total < 64 {
        out.push(Segment { name: "", bits: 64 - total, shift: total, unused: true });
    }
    for f in layout.fields() {
        out.push(Segment {
            name: f.name(),
            bits: u32::from(f.bits()),
            shift: u32::from(f.shift()),
            unused: false,
        });
    }
    out
}

/// A short name for a field too narrow for its own: the usual abbreviations of the presets'
/// field names, else the first two letters. The legend spells them out.
fn abbreviation(name: &str) -> &str {
    match name {
        "datacenter" => "dc",
        "worker" => "wk",
        "process" => "pr",
        "machine" => "mc",
        "platform" => "pf",
        "sequence" => "seq",
        _ => &name[..name.len().min(2)],
    }
}

/// The first of `name (bits)`, `name(bits)`, `name`, `abbr(bits)`, `abbr` that fits `width`
/// (else as much of `abbr` as fits), and the short name used, if any, for the legend.
fn label<'a>(seg: &Segment<'a>, width: usize) -> (String, Option<(String, &'a str)>) {
    if seg.unused {
        let text = [format!("unused ({})", seg.bits), "unused".to_string()]
            .into_iter()
            .find(|t| t.len() <= width)
            .unwrap_or_else(|| "0".repeat(width));
        return (text, None);
    }
    let abbr = abbreviation(seg.name);
    let candidates = [
        (format!("{} ({})", seg.name, seg.bits), false),
        (format!("{}({})", seg.name, seg.bits), false),
        (seg.name.to_string(), false),
        (format!("{abbr}({})", seg.bits), true),
        (abbr.to_string(), true),
    ];
    for (text, short) in candidates {
        if text.len() <= width {
            return (text, short.then(|| (abbr.to_string(), seg.name)));
        }
    }
    let cut: String = abbr.chars().take(width).collect();
    (cut.clone(), Some((cut, seg.name)))
}

fn centered(text: &str, width: usize) -> String {
    let left = (width - text.len().min(width)) / 2;
    format!("{:left$}{text:<w$}", "", w = width - left)
}

/// A row of the box: one cell per segment, each `bits` wide, between `|`s.
fn row(cells: impl Iterator<Item = String>) -> String {
    let mut line = String::from("|");
    for cell in cells {
        line.push_str(&cell);
        line.push('|');
    }
    line
}

fn border(segs: &[Segment]) -> String {
    let mut line = String::from("+");
    for s in segs {
        line.push_str(&"-".repeat(s.bits as usize));
        line.push('+');
    }
    line
}

/// Bit positions over the box: each field's highest bit over its first column and its lowest
/// over its last, left to right, leaving out any number that would touch the one before.
fn ruler(segs: &[Segment]) -> String {
    let mut line: Vec<u8> = Vec::new();
    let mut col = 1usize; // column 0 is the box's left edge
    let place = |line: &mut Vec<u8>, text: String, candidates: &[isize]| {
        for &at in candidates {
            if at < 0 {
                continue;
            }
            let at = at as usize;
            // One blank column between two numbers.
            if at == 0 || line.len() < at {
                if line.len() < at {
                    line.resize(at, b' ');
                }
                line.extend_from_slice(text.as_bytes());
                return;
            }
        }
    };
    for s in segs {
        let (first, last) = (col as isize, (col + s.bits as usize - 1) as isize);
        let high = (s.shift + s.bits - 1).to_string();
        let width = high.len() as isize;
        // A number wider than its field hangs left, over the separator, rather than over
        // the next field's own number.
        if width <= s.bits as isize {
            place(&mut line, high, &[first]);
        } else {
            place(&mut line, high, &[last + 1 - width]);
        }
        if s.bits > 1 {
            let low = s.shift.to_string();
            place(&mut line, low.clone(), &[last + 1 - low.len() as isize]);
        }
        col += s.bits as usize + 1;
    }
    String::from_utf8(line).unwrap_or_default()
}

/// The diagram of `layout`, each line indented by `indent`; with `id`, also its bits and
/// field values. Ends with a legend of the abbreviated names, if any.
pub fn draw(layout: &Layout, id: Option<u64>, indent: &str) -> String {
    let segs = segments(layout);
    let mut lines = vec![ruler(&segs), border(&segs)];
    let mut abbreviated = Vec::new();
    lines.push(row(segs.iter().map(|s| {
        let (text, short) = label(s, s.bits as usize);
        if let Some((short, name)) = short {
            let legend = format!("{short} = {name}");
            if !abbreviated.contains(&legend) {
                abbreviated.push(legend);
            }
        }
        centered(&text, s.bits as usize)
    })));
    lines.push(border(&segs));
    if let Some(id) = id {
        lines.push(row(segs.iter().map(|s| {
            let value = (id >> s.shift) & (u64::MAX >> (64 - s.bits));
            format!("{value:0w$b}", w = s.bits as usize)
        })));
        lines.push(border(&segs));
        lines.push(row(segs.iter().map(|s| {
            let value = (id >> s.shift) & (u64::MAX >> (64 - s.bits));
            let text = if s.unused { String::new() } else { value.to_string() };
            centered(&text, s.bits as usize)
        })));
        lines.push(border(&segs));
    }
    if !abbreviated.is_empty() {
        lines.push(abbreviated.join(", "));
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(indent);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// For `decode --explain`: one line per field under the diagram, with what its value means.
pub fn field_table(layout: &Layout, id: u64, indent: &str) -> String {
    let mut out = String::new();
    let width = layout.fields().iter().map(|f| f.name().len()).max().unwrap_or(0);
    let unused = 64 - u32::from(layout.total_bits());
    if unused > 0 {
        let bits = if unused == 1 { "bit 63 is".to_string() } else { format!("bits 63-{} are", 64 - unused) };
        out.push_str(&format!(
            "{indent}{bits} unused: always 0, so every ID is a positive signed 64-bit integer\n"
        ));
    }
    for f in layout.fields() {
        let value = f.get(id);
        let meaning = match f.kind() {
            FieldKind::Time => {
                let unit = match layout.tick_ms() {
                    1 => "ms".to_string(),
                    ms if ms % 1000 == 0 => format!("ticks of {} s", ms / 1000),
                    ms => format!("ticks of {ms} ms"),
                };
                let unix_ms = layout.unix_ms_of(value);
                format!(
                    "{value} {unit} after the epoch {}\n{indent}{:w$}= {} (Unix ms {unix_ms})",
                    crate::output::time(layout.epoch_ms()),
                    "",
                    crate::output::time(unix_ms),
                    w = width + 2 + 5 + 7,
                )
            }
            FieldKind::Sequence => format!("{value} (of 0..{} in the tick)", f.max()),
            FieldKind::Node => format!("{value} (of 0..{})", f.max()),
        };
        let bits = match f.bits() {
            1 => format!("bit  {}", f.shift()),
            _ => format!("bits {}-{}", f.shift() + f.bits() - 1, f.shift()),
        };
        out.push_str(&format!("{indent}{:<width$}  {bits:<10}  {meaning}\n", f.name()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_every_preset_is_as_wide_as_the_box() {
        for (name, _) in snowflake_core::PRESETS {
            let layout = Layout::parse(name).unwrap();
            let text = draw(&layout, Some(layout.max_value()), "");
            let lines: Vec<&str> = text.lines().collect();
            let width = lines[1].len();
            assert!(width <= 81, "{name}: {width} columns");
            for line in &lines[1..8] {
                assert_eq!(line.len(), width, "{name}: {line}");
            }
            assert!(lines[0].len() <= width, "{name}: ruler {}", lines[0]);
        }
    }

    #[test]
    fn labels_shrink_to_fit() {
        let seg = Segment { name: "datacenter", bits: 5, shift: 17, unused: false };
        assert_eq!(label(&seg, 5), ("dc(5)".to_string(), Some(("dc".to_string(), "datacenter"))));
        let seg = Segment { name: "time", bits: 41, shift: 22, unused: false };
        assert_eq!(label(&seg, 41), ("time (41)".to_string(), None));
        let seg = Segment { name: "sequence", bits: 10, shift: 0, unused: false };
        assert_eq!(label(&seg, 10), ("sequence".to_string(), None));
        let seg = Segment { name: "platform", bits: 3, shift: 22, unused: false };
        assert_eq!(label(&seg, 3), ("pf".to_string(), Some(("pf".to_string(), "platform"))));
        let seg = Segment { name: "sequence", bits: 1, shift: 0, unused: false };
        assert_eq!(label(&seg, 1), ("s".to_string(), Some(("s".to_string(), "sequence"))));
        let seg = Segment { name: "", bits: 20, shift: 44, unused: true };
        assert_eq!(label(&seg, 20).0, "unused (20)");
    }
}
