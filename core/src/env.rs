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
pub const ENV_LAYOUT: &str = crate::sys::CONFIG_VARS[0];
/// The variable holding the node values (`datacenter=1,worker=7`).
pub const ENV_NODE: &str = crate::sys::CONFIG_VARS[1];
/// The variable holding options in the text form (`max_wait_ms=0;lease=redis://…`).
pub const ENV_OPTIONS: &str = crate::sys::CONFIG_VARS[2];
/// The variable that makes node values required: `1` (or `true`) refuses a generator that
/// would issue as the all-zero default, with nothing in the code, `SNOWFLAKE_NODE` or a lease
/// to set them, so that a fleet refuses to start as node 0 (`0`, `false` or empty: not required).
pub const ENV_REQUIRE_NODE: &str = crate::sys::CONFIG_VARS[3];

/// The variables of this library that configure a generator: a variable whose name is a
/// near miss of one of them (`SNOWFLAKE_NOD`, `snowflake_node`) is warned about, naming the one
/// meant, since unset means the default (node 0) with no word.
const CONFIG_NAMES: [&str; 5] = crate::sys::CONFIG_VARS;

/// Other variables this library's front ends read (exact names, never near misses).
const OTHER_NAMES: [&str; 4] = ["SNOWFLAKE_LIB", "SNOWFLAKE_HEADER", "SNOWFLAKE_ADDON", "SNOWFLAKE_NO_ADDON"];

/// The Snowflake data warehouse's variables (its connectors and CLI), which share the
/// `SNOWFLAKE_` prefix: never warned about, though some are near our names
/// (`SNOWFLAKE_ROLE` is two letters from `SNOWFLAKE_NODE`).
const WAREHOUSE_NAMES: [&str; 20] = [
    "SNOWFLAKE_ACCOUNT",
    "SNOWFLAKE_USER",
    "SNOWFLAKE_PASSWORD",
    "SNOWFLAKE_ROLE",
    "SNOWFLAKE_WAREHOUSE",
    "SNOWFLAKE_DATABASE",
    "SNOWFLAKE_SCHEMA",
    "SNOWFLAKE_HOST",
    "SNOWFLAKE_PORT",
    "SNOWFLAKE_PROTOCOL",
    "SNOWFLAKE_REGION",
    "SNOWFLAKE_AUTHENTICATOR",
    "SNOWFLAKE_TOKEN",
    "SNOWFLAKE_PRIVATE_KEY_PATH",
    "SNOWFLAKE_PRIVATE_KEY_FILE",
    "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE",
    "SNOWFLAKE_CONNECTION_NAME",
    "SNOWFLAKE_DEFAULT_CONNECTION_NAME",
    "SNOWFLAKE_HOME",
    "SNOWFLAKE_MODE",
];

/// The configuration variable `name` is a near miss of: a case away, or at most two edits
/// (`SNOWFLAKE_NOD`, `SNOWFLAKE_NODES`, `SNOWFALKE_NODE`); `None` for our own names and the
/// data warehouse's.
///
/// ```
/// use snowflake_core::near_miss;
/// assert_eq!(near_miss("SNOWFLAKE_NOD"), Some("SNOWFLAKE_NODE"));
/// assert_eq!(near_miss("snowflake_node"), Some("SNOWFLAKE_NODE"));
/// assert_eq!(near_miss("SNOWFLAKE_OPTION"), Some("SNOWFLAKE_OPTIONS"));
/// assert_eq!(near_miss("SNOWFLAKE_NODE"), None);
/// assert_eq!(near_miss("SNOWFLAKE_ROLE"), None);
/// assert_eq!(near_miss("SNOWFLAKE_USER"), None);
/// assert_eq!(near_miss("PATH"), None);
/// ```
pub fn near_miss(name: &str) -> Option<&'static str> {
    let exact = |names: &[&str]| names.contains(&name);
    if exact(&CONFIG_NAMES) || exact(&OTHER_NAMES) {
        return None;
    }
    if WAREHOUSE_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name)) {
        return None;
    }
    // Every edit changes the length by one at most: a name longer or shorter by three is
    // three edits away at least (this skips the table for nearly every variable of a process).
    CONFIG_NAMES
        .iter()
        .filter(|n| n.len().abs_diff(name.len()) <= 2)
        .map(|n| (crate::text::text_distance(name, n), *n))
        .filter(|&(d, _)| d <= 2)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// The process's variables that are near misses of ours, scanned again only when its
/// variables change (a scan compares each name with each of ours: 0.2 ms with 36 variables,
/// nearly all of a generator made per request): by their fingerprint, where `sys` reads one.
fn near_misses(fingerprint: Option<u64>) -> Vec<(String, &'static str)> {
    static LAST: crate::memo::Memo<u64, Vec<(String, &'static str)>, 1> = crate::memo::Memo::new();
    if let Some(found) = fingerprint.and_then(|f| LAST.get(|seen| *seen == f)) {
        return found;
    }
    // Names only: a near miss's value is never read (it may be anything, a secret too).
    let found: Vec<(String, &'static str)> = std::env::vars_os()
        .filter_map(|(name, _)| {
            let meant = name.to_str().and_then(near_miss)?;
            Some((name.to_string_lossy().into_owned(), meant))
        })
        .collect();
    if let Some(f) = fingerprint {
        LAST.put(f, found.clone());
    }
    found
}

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
    require_node: Option<String>,
    /// Variables set whose names are near misses of ours: (the name set, the name meant).
    near_misses: Vec<(String, &'static str)>,
    /// What [`Environment::read`] read them from (`None`: given), which a generator made with
    /// [`Environment::open`] reads its record's directory from.
    vars: Option<std::sync::Arc<crate::sys::ConfigVars>>,
}

impl Environment {
    /// `SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE` and `SNOWFLAKE_OPTIONS` of this process. A value
    /// that is not UTF-8 is an [`Error::Environment`].
    pub fn read() -> Result<Environment> {
        let vars = crate::sys::config_vars();
        let var = |i: usize| match vars.values[i].as_deref().map(std::ffi::OsStr::to_str) {
            None => Ok(None),
            Some(Some(value)) => Ok(Some(value.to_string())),
            Some(None) => Err(Error::environment(
                CONFIG_NAMES[i],
                shown(&vars.values[i].as_deref().unwrap_or_default().to_string_lossy()),
                &Error::BadOption {
                    name: Name::snippet(CONFIG_NAMES[i]),
                    reason: "the value is not valid UTF-8",
                },
            )),
        };
        let mut env = Environment {
            layout: var(0)?,
            node: var(1)?,
            options: var(2)?,
            require_node: var(3)?,
            near_misses: Vec::new(),
            vars: None,
        };
        env.near_misses = near_misses(vars.fingerprint);
        env.vars = Some(vars);
        Ok(env)
    }

    /// The variables as `lookup` gives them (`None`: unset).
    pub fn of(mut lookup: impl FnMut(&str) -> Option<String>) -> Environment {
        Environment {
            layout: lookup(ENV_LAYOUT),
            node: lookup(ENV_NODE),
            options: lookup(ENV_OPTIONS),
            require_node: lookup(ENV_REQUIRE_NODE),
            near_misses: Vec::new(),
            vars: None,
        }
    }

    /// The variables of the `(name, value)` pairs, as [`Environment::read`] reads the
    /// process's: ours by name, and every near miss of ours noted for a warning.
    ///
    /// ```
    /// use snowflake_core::{Environment, GivenOptions};
    /// let env = Environment::from_vars([("SNOWFLAKE_NOD", "datacenter=1,worker=7"), ("SNOWFLAKE_USER", "me")]);
    /// let (layout, from) = env.layout(None)?;
    /// let config = env.config(layout, from, None, GivenOptions::new())?;
    /// assert_eq!(config.warnings, ["environment variable SNOWFLAKE_NOD is not one libsnowflake reads (it is ignored): did you mean SNOWFLAKE_NODE?"]);
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    pub fn from_vars<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> Environment {
        let vars: Vec<(&str, &str)> = vars.into_iter().collect();
        let mut env =
            Environment::of(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()));
        for (name, _) in &vars {
            if let Some(meant) = near_miss(name) {
                env.near_misses.push((name.to_string(), meant));
            }
        }
        env
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
                let (redacted, misplaced) = redact_layout(text);
                let fail = |e: &Error| Error::environment(ENV_LAYOUT, shown(&redacted), e);
                if let Some(key) = misplaced {
                    // Its value may be a secret (`lease=redis://…`): named by its key alone.
                    return Err(fail(&Error::BadOption {
                        name: Name::snippet(key),
                        reason: "is not part of a layout (a layout takes `epoch=` and `tick=`): options go in SNOWFLAKE_OPTIONS",
                    }));
                }
                let layout = Layout::parse(text.trim()).map_err(|e| fail(&e))?;
                Ok((layout, Source::Environment(ENV_LAYOUT)))
            }
            None => Ok((Layout::parse(DEFAULT_LAYOUT)?, Source::Default)),
        }
    }

    /// The node values for `layout`: `given`, else `SNOWFLAKE_NODE`, else all zeros; and
    /// where they came from. An empty `SNOWFLAKE_NODE` is an error: a deployment that meant to
    /// set it (a downward-API field that came out empty) must not issue as node 0.
    ///
    /// Empty node values from the code (`{}`, `''`, `[]`: a `Node` that names no field) give
    /// none, so `SNOWFLAKE_NODE` applies: one rule for every front end, since a front end
    /// cannot always tell an empty argument from a missing one (PHP's `[]` default).
    pub fn node(&self, layout: &Layout, given: Option<Node>) -> Result<(Node, Source)> {
        if let Some(node) = given.filter(|n| !n.is_empty()) {
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
            if split_lease(text) {
                // The text after the `;` is a password's end: named by no message.
                return Err(fail(&Error::BadOption {
                    name: Name::snippet("lease"),
                    reason: "the lease address holds a `;` (in its password?), which separates options: percent-encode it as %3B, or give the password with lease_password_file=",
                }));
            }
            // The whole text is checked (names, values, a key twice), whichever keys apply.
            let from_env = GivenOptions::parse(text).map_err(|e| fail(&e))?;
            if from_env.options.isolated {
                // One deployment variable would take every process outside the host's record.
                return Err(fail(&Error::BadOption {
                    name: Name::snippet("isolated"),
                    reason: "isolated takes a generator outside the host's record (for tests and replays with a clock of their own): give it in the code, never from the environment",
                }));
            }
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
        Ok((*self.config_kept(&layout, layout_source, node.as_ref(), &options)?).clone())
    }

    /// [`Environment::config`], then [`Config::open`]: the generator a front end makes,
    /// without a copy of its configuration (a generator made per request).
    ///
    /// ```
    /// use snowflake_core::{Environment, GivenOptions};
    /// let env = Environment::from_vars([("SNOWFLAKE_NODE", "datacenter=1,worker=7")]);
    /// let (layout, from) = env.layout(None)?;
    /// let g = env.open(&layout, from, None, &GivenOptions::parse("isolated=true")?)?;
    /// assert_eq!(layout.node_values(g.node()).collect::<Vec<_>>(), [("datacenter", 1), ("worker", 7)]);
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    pub fn open(
        &self,
        layout: &Layout,
        layout_source: Source,
        node: Option<&Node>,
        options: &GivenOptions,
    ) -> Result<Generator> {
        let config = self.config_kept(layout, layout_source, node, options)?;
        match &self.vars {
            Some(vars) => crate::sys::with_config_vars(vars, || config.open()),
            None => config.open(),
        }
    }

    /// [`Environment::config`]'s answer, kept: it depends on these alone, and a generator made
    /// per request asks the same each time (working it out was a tenth of its time).
    fn config_kept(
        &self,
        layout: &Layout,
        layout_source: Source,
        node: Option<&Node>,
        options: &GivenOptions,
    ) -> Result<std::sync::Arc<Config>> {
        static LAST: crate::memo::Memo<Asked, std::sync::Arc<Config>, 4> = crate::memo::Memo::new();
        let same = |a: &Asked| {
            a.layout == *layout
                && a.layout_source == layout_source
                && match (&a.node, node) {
                    (None, None) => true,
                    (Some(theirs), Some(mine)) => theirs.same(mine),
                    _ => false,
                }
                && a.options == *options
                && a.env == *self
        };
        if let Some(config) = LAST.get(same) {
            return Ok(config);
        }
        let config =
            std::sync::Arc::new(self.config_anew(*layout, layout_source, node.copied(), options.clone())?);
        let asked = Asked {
            env: self.clone(),
            layout: *layout,
            layout_source,
            node: node.copied(),
            options: options.clone(),
        };
        LAST.put(asked, config.clone());
        Ok(config)
    }

    /// [`Environment::config`], worked out.
    fn config_anew(
        &self,
        layout: Layout,
        layout_source: Source,
        node: Option<Node>,
        options: GivenOptions,
    ) -> Result<Config> {
        let given = options.clone();
        let (options, sources) = self.options(options)?;
        let (node, node_source) = self.node(&layout, node)?;
        // The fields the generator sets (a lease's, a rollover's), which node values leave
        // out: the same rule as `Generator::new`'s, so that what passes here opens there.
        let exempt = crate::coord::set_by_generator(&layout, &options)?;
        if let (Source::Environment(variable), Some(text)) = (node_source, &self.node) {
            // Checked here, not when the generator opens, so that a partial map names the
            // variable.
            layout
                .check_node_named(&node, exempt)
                .map_err(|e| Error::environment(variable, shown(text), &e))?;
        }
        if self.node_required()? && node_source == Source::Default {
            let unset = layout.node_fields().any(|(i, _)| exempt & (1 << i) == 0);
            if unset {
                return Err(Error::environment(
                    ENV_REQUIRE_NODE,
                    shown(self.require_node.as_deref().unwrap_or("")),
                    &Error::BadOption {
                        name: Name::snippet(ENV_NODE),
                        reason: "no node values are given, in the code or in SNOWFLAKE_NODE, and node 0 is refused: set SNOWFLAKE_NODE (`datacenter=1,worker=7`) or a lease",
                    },
                ));
            }
        }
        let mut warnings: Vec<String> = self
            .near_misses
            .iter()
            .map(|(name, meant)| {
                format!("environment variable {name} is not one libsnowflake reads (it is ignored): did you mean {meant}?")
            })
            .collect();
        warnings.extend(self.overridden(&layout, layout_source, &node, node_source, &given, &options));
        Ok(Config {
            layout,
            node,
            options,
            provenance: Provenance { layout: layout_source, node: node_source, options: sources },
            warnings,
        })
    }

    /// Whether `SNOWFLAKE_REQUIRE_NODE` requires node values.
    fn node_required(&self) -> Result<bool> {
        match self.require_node.as_deref().map(str::trim) {
            None | Some("" | "0" | "false") => Ok(false),
            Some("1" | "true") => Ok(true),
            Some(other) => Err(Error::environment(
                ENV_REQUIRE_NODE,
                shown(other),
                &Error::BadOption {
                    name: Name::snippet(ENV_REQUIRE_NODE),
                    reason: "is `1` (or `true`) to require node values, `0` (or `false`, or unset) not to",
                },
            )),
        }
    }

    /// The warnings for variables that are set but that the code's values override (one
    /// that gives the same value overrides nothing): a team that sets `SNOWFLAKE_NODE` per pod
    /// must learn that a hard-coded node wins. Values of options are not quoted (a lease's
    /// may hold a password).
    fn overridden(
        &self,
        layout: &Layout,
        layout_source: Source,
        node: &Node,
        node_source: Source,
        given: &GivenOptions,
        options: &Options,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        if let (Source::Code, Some(text)) = (layout_source, &self.layout) {
            if Layout::parse(text.trim()).ok().as_ref() != Some(layout) {
                warnings.push(format!(
                    "environment variable {ENV_LAYOUT} is set, but the code gives another layout, which wins: leave the layout to the environment, or unset {ENV_LAYOUT}"
                ));
            }
        }
        if let (Source::Code, Some(text)) = (node_source, &self.node) {
            if layout.parse_node(text).ok().as_ref() != Some(node) {
                warnings.push(format!(
                    "environment variable {ENV_NODE}=\"{}\" is set, but the code gives node values ({}), which win: leave node values to the environment, or unset {ENV_NODE}",
                    shown(text),
                    NodeText(layout, node)
                ));
            }
        }
        if let Some(text) = &self.options {
            for (i, spec) in OPTIONS.iter().enumerate() {
                if !given.given[i] {
                    continue;
                }
                let Some((_, value)) =
                    Options::text_pairs(text).filter_map(|p| p.ok()).find(|(k, _)| *k == spec.name)
                else {
                    continue;
                };
                let mut probe = options.clone();
                if probe.set_text(spec.name, value).is_ok() && probe != *options {
                    warnings.push(format!(
                        "environment variable {ENV_OPTIONS} sets {}, but the code gives it another value, which wins: leave it to the environment, or take it out of {ENV_OPTIONS}",
                        spec.name
                    ));
                }
            }
        }
        warnings
    }
}

/// What [`Environment::config`] was asked.
struct Asked {
    env: Environment,
    layout: Layout,
    layout_source: Source,
    node: Option<Node>,
    options: GivenOptions,
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
    /// What [`Config::open`] warns about, once per process each: a variable that the code
    /// overrides, a variable's name that is a near miss of ours.
    pub warnings: Vec<String>,
}

impl Config {
    /// The generator of this configuration (`Generator::new`), recording its provenance. Each
    /// of [`Config::warnings`] goes to stderr, once per process (`libsnowflake: warning: …`).
    pub fn open(&self) -> Result<Generator> {
        for w in &self.warnings {
            warn_once(w);
        }
        // Set in place: a generator made per request moved at each step.
        let mut g = Generator::new(&self.layout, self.node, self.options.clone())?;
        g.set_provenance(self.provenance);
        Ok(g)
    }

    /// Everything from the process's environment (and the defaults): `Generator()` with no
    /// arguments, in every front end.
    pub fn from_env() -> Result<Config> {
        let env = Environment::read()?;
        let (layout, source) = env.layout(None)?;
        env.config(layout, source, None, GivenOptions::new())
    }
}

/// Writes `message` to stderr, unless this process wrote it already: a generator made per
/// request must not repeat it per request.
fn warn_once(message: &str) {
    use std::io::Write;
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|m| m == message) {
        seen.push(message.to_string());
        // A closed stderr loses the warning, never the generator.
        let _ = writeln!(std::io::stderr(), "libsnowflake: warning: {message}");
    }
}

/// Node values in their text form.
struct NodeText<'a>(&'a Layout, &'a Node);

impl core::fmt::Display for NodeText<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, (name, value)) in self.0.node_values(self.1).enumerate() {
            write!(f, "{}{name}={value}", if i == 0 { "" } else { "," })?;
        }
        Ok(())
    }
}

/// Whether `item`, after a `lease=` item, is the rest of its address cut at a `;`: not an
/// option, and not written like one (`key=value`, a lowercase key, no `@`: a misspelt option
/// is told as such). A password is followed by `@host`, so its end holds an `@`.
fn lease_tail(item: &str) -> bool {
    let looks_like_option = |(k, v): (&str, &str)| {
        let k = k.trim();
        !k.is_empty() && k.bytes().all(|c| c.is_ascii_lowercase() || c == b'_') && !v.contains('@')
    };
    let key = item.split_once('=').map_or(item.trim(), |(k, _)| k.trim());
    !crate::options::is_option_name(key) && !item.split_once('=').is_some_and(looks_like_option)
}

/// Whether a `lease=` item of the options text is followed by the rest of its address
/// (`lease=redis://app:pa;ss@cache/0`): a `;` of the address, which the split cut.
fn split_lease(text: &str) -> bool {
    let mut after_lease = false;
    for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        if after_lease && lease_tail(item) {
            return true;
        }
        after_lease = item.split_once('=').is_some_and(|(k, _)| k.trim() == "lease");
    }
    false
}

/// `SNOWFLAKE_LAYOUT`'s text with each item that is not a layout's (`epoch=`, `tick=`)
/// hidden but its key, and the first such key (`option` where it has none that reads as a
/// name): an option put there by mistake may hold a password.
fn redact_layout(text: &str) -> (String, Option<&str>) {
    let mut misplaced = None;
    let items: Vec<String> = text
        .split(';')
        .enumerate()
        .map(|(i, item)| match item.split_once('=').map(|(k, _)| k.trim()) {
            _ if i == 0 || item.trim().is_empty() => item.to_string(),
            Some(key @ ("epoch" | "tick")) => {
                let _ = key;
                item.to_string()
            }
            Some(key) if !key.is_empty() && key.bytes().all(|c| c.is_ascii_lowercase() || c == b'_') => {
                misplaced = misplaced.or(Some(key));
                format!("{key}=***")
            }
            _ => {
                misplaced = misplaced.or(Some("option"));
                "***".to_string()
            }
        })
        .collect();
    (items.join(";"), misplaced)
}

/// `text`, cut short for a message.
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(SHOWN_CHARS).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

/// The options text with each `lease=` address's password hidden, and anything after a
/// `lease=` item that is no option (a password's end past a `;`) hidden whole.
fn redact_options(text: &str) -> String {
    let mut after_lease = false;
    text.split(';')
        .map(|item| {
            let key = item.split_once('=').map_or(item.trim(), |(k, _)| k.trim());
            if after_lease && !item.trim().is_empty() && lease_tail(item) {
                return "***".to_string();
            }
            after_lease = key == "lease" || (after_lease && item.trim().is_empty());
            match item.split_once('=') {
                Some((k, v)) if k.trim() == "lease" => format!("{k}={}", redact_url(v.trim())),
                _ => item.to_string(),
            }
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
            ..Environment::default()
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

    fn config_of(e: &Environment, node: Option<&str>, options: &str) -> Result<Config> {
        let (layout, source) = e.layout(None)?;
        let node = node.map(|n| layout.parse_node(n)).transpose()?;
        e.config(layout, source, node, GivenOptions::parse(options)?)
    }

    // Its cases open a lease (`lease-local`): the whole build's test (`cargo test --workspace`).
    #[cfg(feature = "lease-local")]
    #[test]
    fn a_lease_and_the_other_node_values_both_from_the_environment() {
        // The issue's case: the lease holds `worker`, SNOWFLAKE_NODE gives `datacenter`.
        let e = env(None, Some("datacenter=1"), Some("lease=local;max_wait_ms=0"));
        let c = config_of(&e, None, "").unwrap();
        assert_eq!(c.provenance.node, Source::Environment(ENV_NODE));
        let g = c.open().unwrap();
        let parts = g.layout().decode(g.next_id().unwrap()).unwrap();
        assert_eq!(parts.node.get(1), 1, "datacenter from SNOWFLAKE_NODE");
        // As from the code: the leased field is the lease's, in either place.
        let e = env(None, Some("datacenter=1,worker=0"), Some("lease=local"));
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert_eq!(err, "environment variable SNOWFLAKE_NODE=\"datacenter=1,worker=0\": `worker`: this field is set by the generator (the lease or the rollover): give it no node value");
        let e = env(None, None, Some("lease=local"));
        assert!(config_of(&e, Some("datacenter=1,worker=0"), "").unwrap().open().is_err());
    }

    // Its cases open a lease (`lease-redis`): the whole build's test (`cargo test --workspace`).
    #[cfg(feature = "lease-redis")]
    #[test]
    fn secrets_in_the_environment_stay_out_of_messages() {
        let e = env(None, None, Some("lease=redis://app:pa;ss@cache:6379/0;max_wait_ms=0"));
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert_eq!(err, "environment variable SNOWFLAKE_OPTIONS=\"lease=redis://***;***;max_wait_ms=0\": `lease`: the lease address holds a `;` (in its password?), which separates options: percent-encode it as %3B, or give the password with lease_password_file=");
        let e = env(Some("twitter;lease=redis://app:s3cret@cache/0"), None, None);
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert_eq!(err, "environment variable SNOWFLAKE_LAYOUT=\"twitter;lease=***\": `lease`: is not part of a layout (a layout takes `epoch=` and `tick=`): options go in SNOWFLAKE_OPTIONS");
        let e = env(Some("twitter;s3cret"), None, None);
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert!(!err.contains("s3cret"), "{err}");
        // A misspelt option after a lease is told as such.
        let e = env(None, None, Some("lease=redis://app:s3cret@cache/0;max_wait=1"));
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert!(err.starts_with("environment variable SNOWFLAKE_OPTIONS=\"lease=redis://app:***@cache/0;max_wait=1\": unknown option `max_wait`"), "{err}");
        let e = env(None, None, Some("lease=redis://app:pa;ss=x@cache/0"));
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert!(err.starts_with("environment variable SNOWFLAKE_OPTIONS=\"lease=redis://***;***\": `lease`: the lease address holds"), "{err}");
        // A layout's own options are shown and parsed as ever.
        assert_eq!(redact_layout("time:41,worker:10,sequence:12;epoch=0;tick=1ms").1, None);
    }

    #[test]
    fn isolated_is_refused_from_the_environment() {
        let e = env(None, None, Some("max_wait_ms=0;isolated=true"));
        let err = config_of(&e, None, "isolated=true").unwrap_err();
        assert_eq!(err.to_string(), "environment variable SNOWFLAKE_OPTIONS=\"max_wait_ms=0;isolated=true\": `isolated`: isolated takes a generator outside the host's record (for tests and replays with a clock of their own): give it in the code, never from the environment");
        assert_eq!(err.kind(), crate::ErrorKind::Value);
        // From the code it is the code's.
        let c = config_of(&env(None, None, Some("max_wait_ms=0")), None, "isolated=true").unwrap();
        assert!(c.options.isolated);
    }

    #[test]
    fn empty_node_values_from_the_code_give_none() {
        let e = env(None, Some("datacenter=2,worker=5"), None);
        for empty in ["", " , "] {
            let c = config_of(&e, Some(empty), "").unwrap();
            assert_eq!(c.provenance.node, Source::Environment(ENV_NODE));
            assert_eq!(c.layout.node_values(&c.node).collect::<Vec<_>>(), [("datacenter", 2), ("worker", 5)]);
        }
        let c = config_of(&Environment::none(), Some(""), "").unwrap();
        assert_eq!((c.node, c.provenance.node), (Node::default(), Source::Default));
    }

    #[test]
    fn near_misses_of_our_names_are_warned_about() {
        let e = Environment::from_vars([
            ("SNOWFLAKE_NOD", "datacenter=1,worker=7"),
            ("snowflake_options", "max_wait_ms=0"),
            ("SNOWFLAKE_ACCOUNT", "acme"),
            ("SNOWFLAKE_USER", "me"),
            ("SNOWFLAKE_ROLE", "admin"),
            ("SNOWFLAKE_SHM_DIR", "/tmp"),
        ]);
        let c = config_of(&e, None, "").unwrap();
        assert_eq!(
            c.warnings,
            [
                "environment variable SNOWFLAKE_NOD is not one libsnowflake reads (it is ignored): did you mean SNOWFLAKE_NODE?",
                "environment variable snowflake_options is not one libsnowflake reads (it is ignored): did you mean SNOWFLAKE_OPTIONS?",
            ]
        );
        assert_eq!(c.provenance.node, Source::Default);
    }

    // Its cases open a lease (`lease-local`): the whole build's test (`cargo test --workspace`).
    #[cfg(feature = "lease-local")]
    #[test]
    fn node_values_can_be_required() {
        let e = Environment::from_vars([("SNOWFLAKE_REQUIRE_NODE", "1")]);
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert_eq!(err, "environment variable SNOWFLAKE_REQUIRE_NODE=\"1\": `SNOWFLAKE_NODE`: no node values are given, in the code or in SNOWFLAKE_NODE, and node 0 is refused: set SNOWFLAKE_NODE (`datacenter=1,worker=7`) or a lease");
        config_of(&e, Some("datacenter=0,worker=0"), "").unwrap(); // the code's zeros are meant
        let e = Environment::from_vars([
            ("SNOWFLAKE_REQUIRE_NODE", "1"),
            ("SNOWFLAKE_NODE", "datacenter=1,worker=2"),
        ]);
        config_of(&e, None, "").unwrap();
        // A lease of the only node field sets every one.
        let e = Environment::from_vars([
            ("SNOWFLAKE_REQUIRE_NODE", "true"),
            ("SNOWFLAKE_LAYOUT", "instagram"),
            ("SNOWFLAKE_OPTIONS", "lease=local"),
        ]);
        config_of(&e, None, "").unwrap();
        let e = Environment::from_vars([("SNOWFLAKE_REQUIRE_NODE", "0")]);
        config_of(&e, None, "").unwrap();
        let e = Environment::from_vars([("SNOWFLAKE_REQUIRE_NODE", "yes")]);
        assert!(config_of(&e, None, "")
            .unwrap_err()
            .to_string()
            .starts_with("environment variable SNOWFLAKE_REQUIRE_NODE=\"yes\": "));
    }

    #[test]
    fn the_code_overriding_a_set_variable_is_warned_about() {
        let e = env(Some("discord"), Some("datacenter=3,worker=4"), Some("max_wait_ms=0;max_drift_ms=5"));
        let (_, _) = e.layout(None).unwrap();
        let twitter = Layout::parse("twitter").unwrap();
        let node = twitter.parse_node("datacenter=1,worker=1").unwrap();
        let c = e
            .config(
                twitter,
                Source::Code,
                Some(node),
                GivenOptions::parse("max_wait_ms=0;max_drift_ms=9").unwrap(),
            )
            .unwrap();
        assert_eq!(
            c.warnings,
            [
                "environment variable SNOWFLAKE_LAYOUT is set, but the code gives another layout, which wins: leave the layout to the environment, or unset SNOWFLAKE_LAYOUT",
                "environment variable SNOWFLAKE_NODE=\"datacenter=3,worker=4\" is set, but the code gives node values (datacenter=1,worker=1), which win: leave node values to the environment, or unset SNOWFLAKE_NODE",
                "environment variable SNOWFLAKE_OPTIONS sets max_drift_ms, but the code gives it another value, which wins: leave it to the environment, or take it out of SNOWFLAKE_OPTIONS",
            ]
        );
        // The same values override nothing.
        let e = env(Some("twitter"), Some("datacenter=1,worker=1"), Some("max_wait_ms=0"));
        let c = e
            .config(twitter, Source::Code, Some(node), GivenOptions::parse("max_wait_ms=0").unwrap())
            .unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn a_typo_in_a_node_name_says_what_was_meant() {
        let e = env(None, Some("datacenter=1,wroker=7"), None);
        let err = config_of(&e, None, "").unwrap_err().to_string();
        assert_eq!(err, "environment variable SNOWFLAKE_NODE=\"datacenter=1,wroker=7\": the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)");
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
