//! Configuration from the environment: `SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE` and
//! `SNOWFLAKE_OPTIONS` fill what the code that makes a generator left unset, so that a
//! deployment (a Kubernetes pod spec, a systemd unit) sets a process's node values with no
//! code. Every front end resolves its generator's configuration here, once:
//!
//! 1. the layout: the code's, else `SNOWFLAKE_LAYOUT` (a preset name or spec), else `twitter`;
//! 2. the node values: the code's, else `SNOWFLAKE_NODE` (`datacenter=1,worker=7`, read
//!    against that layout), else all zeros;
//! 3. each option: the code's, else the key's value in `SNOWFLAKE_OPTIONS` (the options text,
//!    `max_wait_ms=0;lease=redis://…`, as [`Options::parse`] reads it), else its default.
//!
//! A variable is read only where it applies (a layout in the code leaves `SNOWFLAKE_LAYOUT`
//! unread; `SNOWFLAKE_OPTIONS` applies to every key the code left unset, so it is always read).
//! What is read must be well formed: a malformed variable, or one set but empty for the layout
//! or node values, is an [`Error::Environment`] that names the variable and its value (with
//! any password hidden), of the kind of what is wrong (a layout, a value): never ignored, never
//! a silent default. Where each value came from is kept ([`Provenance`]), and every front end
//! shows it beside its generator's stats.
//!
//! ```
//! use snowflake_core::{Environment, GivenOptions, Source};
//! let env = Environment::of(|name| match name {
//!     "SNOWFLAKE_NODE" => Some("datacenter=1,worker=7".into()),
//!     "SNOWFLAKE_OPTIONS" => Some("max_wait_ms=0;max_drift_ms=5".into()),
//!     _ => None,
//! });
//! let (layout, from) = env.layout(None)?;                     // nothing in the code
//! assert_eq!((layout.to_string().starts_with("time:41,datacenter:5"), from), (true, Source::Default));
//! let mut given = GivenOptions::new();
//! given.set_text("max_drift_ms", "50")?;                      // the code's wins
//! let config = env.config(layout, from, None, given)?;
//! assert_eq!(layout.node_values(&config.node).collect::<Vec<_>>(), [("datacenter", 1), ("worker", 7)]);
//! assert_eq!((config.options.max_wait_ms, config.options.max_drift_ms), (0, 50));
//! assert_eq!(config.provenance.node, Source::Environment("SNOWFLAKE_NODE"));
//! assert_eq!(config.provenance.option("max_drift_ms"), Some(Source::Code));
//! assert_eq!(config.provenance.option("max_wait_ms"), Some(Source::Environment("SNOWFLAKE_OPTIONS")));
//!
//! let bad = Environment::of(|name| (name == "SNOWFLAKE_NODE").then(|| "datacenter=1,wroker=7".into()));
//! let err = bad.config(layout, from, None, GivenOptions::new()).unwrap_err();
//! assert!(err.to_string().starts_with("environment variable SNOWFLAKE_NODE=\"datacenter=1,wroker=7\": "), "{err}");
//! # Ok::<(), snowflake_core::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::layout::{Layout, Node};
use crate::options::{redact_url, Options, Provenance, Source, OPTIONS};
use crate::text::{Name, Spelling};
use crate::value::Value;
use crate::Generator;

/// The variable holding the layout (a preset name or a spec).
pub const ENV_LAYOUT: &str = "SNOWFLAKE_LAYOUT";
/// The variable holding the node values (`datacenter=1,worker=7`).
pub const ENV_NODE: &str = "SNOWFLAKE_NODE";
/// The variable holding options in the text form (`max_wait_ms=0;lease=redis://…`).
pub const ENV_OPTIONS: &str = "SNOWFLAKE_OPTIONS";
/// The layout when neither the code nor the environment names one.
pub const DEFAULT_LAYOUT: &str = "twitter";

/// How much of a variable's value an error message shows.
const SHOWN_CHARS: usize = 120;

/// Options as the code gave them, key by key: [`Options`], and which keys the code set (to
/// its default value too), so that `SNOWFLAKE_OPTIONS` fills only the others. Setting a key
/// to [`Value::Unset`] leaves it to the environment again.
///
/// ```
/// use snowflake_core::{GivenOptions, Value};
/// let mut o = GivenOptions::parse("max_wait_ms=1000")?;
/// o.set("maxDriftMs", Value::Int(5))?;
/// assert!(o.is_given("max_wait_ms") && o.is_given("max_drift_ms") && !o.is_given("shared"));
/// o.set("max_wait_ms", Value::Unset)?;
/// assert!(!o.is_given("max_wait_ms"));
/// # Ok::<(), snowflake_core::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GivenOptions {
    options: Options,
    given: [bool; OPTIONS.len()],
}

impl GivenOptions {
    /// No option given.
    pub fn new() -> GivenOptions {
        GivenOptions::default()
    }

    /// The options of the text form `key=value;…` ([`Options::parse`]'s grammar), each given.
    pub fn parse(text: &str) -> Result<GivenOptions> {
        let mut o = GivenOptions::new();
        o.options.set_pairs(Options::text_pairs(text), &mut o.given)?;
        Ok(o)
    }

    /// The options text with keyword arguments on top, all of them the code's: Python's
    /// `Generator(…, options="lease=…;max_wait_ms=0", max_drift_ms=5)`. The text is read as
    /// [`GivenOptions::parse`] reads it, each keyword set as [`Options::set_keyword`] sets it
    /// (an unknown one is a [`crate::ErrorKind::Type`] error), and an option given both ways
    /// is refused: neither silently wins.
    ///
    /// ```
    /// use snowflake_core::{GivenOptions, Value};
    /// let o = GivenOptions::parse_with_keywords("max_wait_ms=0", [("max_drift_ms", Value::Int(5))])?;
    /// assert_eq!((o.options().max_wait_ms, o.options().max_drift_ms), (0, 5));
    /// assert!(o.is_given("max_wait_ms") && o.is_given("max_drift_ms"));
    /// let twice = GivenOptions::parse_with_keywords("max_wait_ms=0", [("max_wait_ms", Value::Int(5))]);
    /// assert!(twice.unwrap_err().to_string().contains("both"));
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    pub fn parse_with_keywords<'a>(
        text: &str,
        keywords: impl IntoIterator<Item = (&'a str, Value<'a>)>,
    ) -> Result<GivenOptions> {
        let mut o = GivenOptions::parse(text)?;
        for (name, value) in keywords {
            if o.is_given(name) {
                return Err(Error::BadOption {
                    name: Name::snippet(name),
                    reason: "is given both in the options text and as a keyword argument: give it once",
                });
            }
            o.options.set_keyword(name, value)?;
            o.mark(name, Spelling::Snake, true);
        }
        Ok(o)
    }

    /// [`Options::set`], recording the key as given (or not, for [`Value::Unset`]).
    pub fn set(&mut self, name: &str, value: Value<'_>) -> Result<()> {
        let spelling =
            if name.contains(|c: char| c.is_ascii_uppercase()) { Spelling::Camel } else { Spelling::Snake };
        self.set_spelled(name, spelling, value)
    }

    /// [`Options::set_spelled`], recording the key as given (or not, for [`Value::Unset`]).
    pub fn set_spelled(&mut self, name: &str, spelling: Spelling, value: Value<'_>) -> Result<()> {
        let unset = matches!(value, Value::Unset);
        self.options.set_spelled(name, spelling, value)?;
        self.mark(name, spelling, !unset);
        Ok(())
    }

    /// [`Options::set_text`], recording the key as given.
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<()> {
        self.options.set_text(name, text)?;
        self.mark(name, Spelling::Snake, true);
        Ok(())
    }

    fn mark(&mut self, name: &str, spelling: Spelling, given: bool) {
        if let Some(i) = OPTIONS.iter().position(|o| o.spelled(spelling).as_str() == name) {
            self.given[i] = given;
        }
    }

    /// Whether the code gave option `name` (snake_case).
    pub fn is_given(&self, name: &str) -> bool {
        OPTIONS.iter().position(|o| o.name == name).is_some_and(|i| self.given[i])
    }

    /// The options (the defaults where none was given).
    pub fn options(&self) -> &Options {
        &self.options
    }
}

impl From<Options> for GivenOptions {
    /// Every key of `options` that differs from its default, given; the others left to the
    /// environment.
    fn from(options: Options) -> GivenOptions {
        let mut o = GivenOptions::new();
        for (i, spec) in OPTIONS.iter().enumerate() {
            // A key differs from its default when putting it back changes the options.
            let mut probe = options.clone();
            let _ = probe.set(spec.name, Value::Unset);
            o.given[i] = probe != options;
        }
        o.options = options;
        o
    }
}

/// The configuration variables, read once from the process's environment (or given, for
/// tests and for programs that keep their settings elsewhere).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Environment {
    layout: Option<String>,
    node: Option<String>,
    options: Option<String>,
}

impl Environment {
    /// `SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE` and `SNOWFLAKE_OPTIONS` of this process. A value
    /// that is not UTF-8 is an [`Error::Environment`].
    pub fn read() -> Result<Environment> {
        let var = |name: &'static str| match std::env::var(name) {
            Ok(value) => Ok(Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(raw)) => Err(Error::environment(
                name,
                shown(&raw.to_string_lossy()),
                &Error::BadOption { name: Name::snippet(name), reason: "the value is not valid UTF-8" },
            )),
        };
        Ok(Environment { layout: var(ENV_LAYOUT)?, node: var(ENV_NODE)?, options: var(ENV_OPTIONS)? })
    }

    /// The variables as `lookup` gives them (`None`: unset).
    pub fn of(mut lookup: impl FnMut(&str) -> Option<String>) -> Environment {
        Environment { layout: lookup(ENV_LAYOUT), node: lookup(ENV_NODE), options: lookup(ENV_OPTIONS) }
    }

    /// No variable set: only the code and the defaults.
    pub fn none() -> Environment {
        Environment::default()
    }

    /// The layout: `given`, else `SNOWFLAKE_LAYOUT`, else [`DEFAULT_LAYOUT`]; and where it
    /// came from.
    pub fn layout(&self, given: Option<Layout>) -> Result<(Layout, Source)> {
        if let Some(layout) = given {
            return Ok((layout, Source::Code));
        }
        match &self.layout {
            Some(text) => {
                let layout = Layout::parse(text.trim())
                    .map_err(|e| Error::environment(ENV_LAYOUT, shown(text), &e))?;
                Ok((layout, Source::Environment(ENV_LAYOUT)))
            }
            None => Ok((Layout::parse(DEFAULT_LAYOUT)?, Source::Default)),
        }
    }

    /// The node values for `layout`: `given`, else `SNOWFLAKE_NODE`, else all zeros; and
    /// where they came from. An empty `SNOWFLAKE_NODE` is an error: a deployment that meant to
    /// set it (a downward-API field that came out empty) must not issue as node 0.
    pub fn node(&self, layout: &Layout, given: Option<Node>) -> Result<(Node, Source)> {
        if let Some(node) = given {
            return Ok((node, Source::Code));
        }
        match &self.node {
            Some(text) => {
                let fail = |e: &Error| Error::environment(ENV_NODE, shown(text), e);
                if text.trim().is_empty() {
                    return Err(fail(&Error::BadOption {
                        name: Name::snippet(ENV_NODE),
                        reason: "the variable is set but empty: name every node field of the layout (`datacenter=1,worker=7`), or unset it for all zeros",
                    }));
                }
                let node = layout.parse_node(text).map_err(|e| fail(&e))?;
                Ok((node, Source::Environment(ENV_NODE)))
            }
            None => Ok((Node::default(), Source::Default)),
        }
    }

    /// `given`, with each key the code left unset taken from `SNOWFLAKE_OPTIONS` when it
    /// holds that key; and where each came from.
    pub fn options(&self, given: GivenOptions) -> Result<(Options, [Source; OPTIONS.len()])> {
        let mut sources = [Source::Default; OPTIONS.len()];
        for (i, source) in sources.iter_mut().enumerate() {
            if given.given[i] {
                *source = Source::Code;
            }
        }
        let mut options = given.options;
        if let Some(text) = &self.options {
            let fail = |e: &Error| Error::environment(ENV_OPTIONS, shown(&redact_options(text)), e);
            // The whole text is checked (names, values, a key twice), whichever keys apply.
            let from_env = GivenOptions::parse(text).map_err(|e| fail(&e))?;
            for (i, spec) in OPTIONS.iter().enumerate() {
                if from_env.given[i] && !given.given[i] {
                    let value = Options::text_pairs(text)
                        .filter_map(|p| p.ok())
                        .find(|(k, _)| *k == spec.name)
                        .map(|(_, v)| v)
                        .unwrap_or_default();
                    options.set_text(spec.name, value).map_err(|e| fail(&e))?;
                    sources[i] = Source::Environment(ENV_OPTIONS);
                }
            }
        }
        Ok((options, sources))
    }

    /// The whole configuration of a generator, from the code's `layout` (already resolved
    /// with [`Environment::layout`], from `layout_source`), its node values (`None`: unset)
    /// and its options.
    pub fn config(
        &self,
        layout: Layout,
        layout_source: Source,
        node: Option<Node>,
        options: GivenOptions,
    ) -> Result<Config> {
        let (options, sources) = self.options(options)?;
        let (node, node_source) = self.node(&layout, node)?;
        if let (Source::Environment(variable), Some(text)) = (node_source, &self.node) {
            // Checked here, not when the generator opens, so that a partial map names the
            // variable (the rollover field is the generator's, left out).
            layout
                .check_node_named(&node, options.rollover_bit(&layout))
                .map_err(|e| Error::environment(variable, shown(text), &e))?;
        }
        Ok(Config {
            layout,
            node,
            options,
            provenance: Provenance { layout: layout_source, node: node_source, options: sources },
        })
    }
}

/// A generator's whole configuration, and where each part came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The layout.
    pub layout: Layout,
    /// The node values.
    pub node: Node,
    /// The options.
    pub options: Options,
    /// Where each came from.
    pub provenance: Provenance,
}

impl Config {
    /// The generator of this configuration (`Generator::new`), recording its provenance.
    pub fn open(self) -> Result<Generator> {
        Ok(Generator::new(&self.layout, self.node, self.options)?.with_provenance(self.provenance))
    }

    /// Everything from the process's environment (and the defaults): `Generator()` with no
    /// arguments, in every front end.
    pub fn from_env() -> Result<Config> {
        let env = Environment::read()?;
        let (layout, source) = env.layout(None)?;
        env.config(layout, source, None, GivenOptions::new())
    }
}

/// `text`, cut short for a message.
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(SHOWN_CHARS).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

/// The options text with each `lease=` address's password hidden.
fn redact_options(text: &str) -> String {
    text.split(';')
        .map(|item| match item.split_once('=') {
            Some((k, v)) if k.trim() == "lease" => format!("{k}={}", redact_url(v.trim())),
            _ => item.to_string(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(layout: Option<&str>, node: Option<&str>, options: Option<&str>) -> Environment {
        Environment {
            layout: layout.map(String::from),
            node: node.map(String::from),
            options: options.map(String::from),
        }
    }

    #[test]
    fn the_code_wins_then_the_environment_then_the_default() {
        let e =
            env(Some("discord"), Some("worker=3,process=4"), Some("max_wait_ms=0;sequence_start=spread:4"));
        let (layout, source) = e.layout(None).unwrap();
        assert_eq!((layout, source), (Layout::parse("discord").unwrap(), Source::Environment(ENV_LAYOUT)));
        let twitter = Layout::parse("twitter").unwrap();
        assert_eq!(e.layout(Some(twitter)).unwrap(), (twitter, Source::Code));
        let mut given = GivenOptions::new();
        given.set("max_wait_ms", Value::Int(1000)).unwrap(); // the default value, but the code's
        let c = e.config(layout, source, None, given).unwrap();
        assert_eq!(layout.node_values(&c.node).collect::<Vec<_>>(), [("worker", 3), ("process", 4)]);
        assert_eq!(c.options.max_wait_ms, 1000);
        assert_eq!(c.options.sequence_start, crate::SequenceStart::Spread(4));
        assert_eq!(c.provenance.option("max_wait_ms"), Some(Source::Code));
        assert_eq!(c.provenance.option("sequence_start"), Some(Source::Environment(ENV_OPTIONS)));
        assert_eq!(c.provenance.option("max_drift_ms"), Some(Source::Default));
        // Nothing set: twitter, zeros, defaults.
        let (layout, source) = Environment::none().layout(None).unwrap();
        let c = Environment::none().config(layout, source, None, GivenOptions::new()).unwrap();
        assert_eq!((c.layout, c.node, c.options), (twitter, Node::default(), Options::default()));
        assert!(c.provenance.iter().all(|(_, s)| s == Source::Default));
    }

    #[test]
    fn a_malformed_variable_names_itself_and_its_value() {
        let layout = Layout::parse("twitter").unwrap();
        let cases: [(Environment, &str, crate::ErrorKind); 7] = [
            (
                env(Some("twiter"), None, None),
                "SNOWFLAKE_LAYOUT=\"twiter\": invalid layout",
                crate::ErrorKind::Layout,
            ),
            (
                env(Some(""), None, None),
                "SNOWFLAKE_LAYOUT=\"\": invalid layout: the layout spec is empty",
                crate::ErrorKind::Layout,
            ),
            (
                env(None, Some("worker=7"), None),
                "SNOWFLAKE_NODE=\"worker=7\": the node values give no value for `datacenter`",
                crate::ErrorKind::Value,
            ),
            (
                env(None, Some("  "), None),
                "SNOWFLAKE_NODE=\"  \": `SNOWFLAKE_NODE`: the variable is set but empty",
                crate::ErrorKind::Value,
            ),
            (
                env(None, None, Some("max_wait=0")),
                "SNOWFLAKE_OPTIONS=\"max_wait=0\": unknown option `max_wait`",
                crate::ErrorKind::Value,
            ),
            (
                // The options text's own hint, read from the environment too.
                env(None, None, Some("max_wait_ms=0,max_drift_ms=5")),
                "SNOWFLAKE_OPTIONS=\"max_wait_ms=0,max_drift_ms=5\": `max_wait_ms`: options are separated by `;`, not `,`",
                crate::ErrorKind::Value,
            ),
            (
                env(None, None, Some("lease=redis://app:s3cret@cache/0;lease_ttl_ms=5")),
                // Out of range, or not in this build: either way without the password.
                "SNOWFLAKE_OPTIONS=\"lease=redis://app:***@cache/0;lease_ttl_ms=5\": ",
                crate::ErrorKind::Value,
            ),
        ];
        for (e, expected, kind) in cases {
            let err = e
                .layout(None)
                .and_then(|(l, s)| e.config(l, s, None, GivenOptions::new()))
                .expect_err(expected);
            let text = err.to_string();
            assert!(text.starts_with(&format!("environment variable {expected}")), "{text}");
            assert!(!text.contains("s3cret"), "{text}");
            assert_eq!(err.kind(), kind, "{text}");
        }
        // A variable that does not apply is not read: the code's layout leaves it alone.
        let e = env(Some("twiter"), None, None);
        assert_eq!(e.layout(Some(layout)).unwrap().1, Source::Code);
        // The whole options text is checked, even a key the code gave.
        let mut given = GivenOptions::new();
        given.set_text("max_wait_ms", "0").unwrap();
        assert!(env(None, None, Some("max_wait_ms=x")).config(layout, Source::Code, None, given).is_err());
    }

    #[test]
    fn given_options_follow_the_spelling() {
        let mut o = GivenOptions::new();
        o.set_spelled("maxWaitMs", Spelling::Camel, Value::Int(0)).unwrap();
        assert!(o.is_given("max_wait_ms"));
        assert!(GivenOptions::parse("max_wait_ms=0;max_wait_ms=1").is_err());
        let from: GivenOptions = Options { max_wait_ms: 0, ..Options::default() }.into();
        assert!(from.is_given("max_wait_ms") && !from.is_given("max_drift_ms"));
    }
}
