"""Runs every code block of README.md as a new user runs it, and checks the README's promises.

The README is read top to bottom. HTML comments (invisible on the rendered page) tell this test
how the blocks fit together; a block that none of these rules covers fails the test, so no block
is ever skipped in silence:

    <!-- test: session NAME [checkout] [root] [release [DIR/=]GLOB]... [files NAME...] -->
        Starts a session: a new, empty directory (the user's project), in which `libsnowflake`
        is this checkout (the user's clone) and every `release` file of dist/ is copied (the
        user's downloads; `packages/=php/*.zip` copies into packages/). One bash runs the
        session's blocks in order, as pasted into one terminal (`set -euo pipefail`):
        - a `sh` block is run as it is;
        - any other block whose first line is a comment naming a file (`// app.c`,
          `# app.py`, `<?php // app.php`) is saved under that name, as the user saves it.
        `checkout`: the session works in the checkout itself instead. `files`: files saved
        by earlier sessions are copied in. `root`: the session may install into /usr/local
        and run ldconfig, in a private mount namespace where /usr/local/lib,
        /usr/local/include and /etc are copies, so that nothing outside changes.
        `after NAME`: the session first runs the blocks of session NAME's first run (a reader
        who goes on from there), with its release files and saved files.
    <!-- test: end -->
        Ends the session before its section does.
    <!-- test: or -->
        The next block is an alternative to the block before it: the session runs again from
        the start with this block in that one's place (each alternative once).
    <!-- test: sql -->
        The next block (`sql`) runs in psql (ON_ERROR_STOP) against a new PostgreSQL
        (tests/servers).
    docs/*.md pages use the same directives after the README's sessions; there only the blocks
    inside a session are run (the others are checked by their language's tests: tests/c/run.sh
    compares docs/c.md's whole files with tests/c and tests/cpp, docs_test.php runs php.md's
    example, ...).
    `rust` blocks are core's doctests: core/src/lib.rs includes README.md, and
    `cargo test --workspace` (scripts/check.sh) compiles and runs them; this test checks the
    include is there.

The package registries are not reachable here, so each session's environment makes the
release files of dist/ (scripts/dist.sh) what the user's package tools find; the commands run
unchanged: pip through PIP_NO_INDEX and PIP_FIND_LINKS=dist/python; npm through a registry
served by this test (npm_config_registry) that holds dist/node's two packages and nothing
else; Composer with Packagist turned off in the session's COMPOSER_HOME (the README's
Composer steps name their own repository). Each session has its own HOME, TMPDIR,
SNOWFLAKE_SHM_DIR, and no SNOWFLAKE_LIB, PKG_CONFIG_PATH or
LD_LIBRARY_PATH from outside.

Also checked: the README is under 500 lines; its and docs/'s relative links lead to files that
exist, their #anchors to headings; its error table lists every code of core's table
(tests/vectors/tables.json); an unknown option's message lists every option of core's
option table (the CLI the `try` session built; C through the tarball's library; PHP, Python and
Node as the sessions installed them); a program linked without an rpath stops with the loader
error the README quotes; and PHP from a checkout with no SNOWFLAKE_LIB says to set it.

Each check is a pytest test, each run of a session one (`test_session[c]`,
`test_session[php-or1]`); the sessions run in the README's order, and the later checks read the
projects they left. A test's checks are soft ones (tests/servers/checks.py).

    .venv/bin/python -m pytest tests/readme -q -p no:cacheprovider     # after scripts/dist.sh
    .venv/bin/python -m pytest tests/readme -q -p no:cacheprovider -k 'c or c-system'
"""
from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DIST = ROOT / "dist"
TABLES = json.loads((ROOT / "tests" / "vectors" / "tables.json").read_text())
MAX_LINES = 500
sys.path.insert(0, str(ROOT / "tests" / "servers"))

# The running test's soft checks (tests/servers/checks.py), for the helpers below.
_checks = None


@pytest.fixture(autouse=True)
def _soft_checks(checks) -> Iterator[None]:  # noqa: ANN001
    global _checks
    _checks = checks
    yield
    _checks = None


def check(desc: str, ok: bool, detail: str = "") -> bool:
    assert _checks is not None, "check() outside a test"
    return _checks(ok, desc, detail)


# --- reading the README ------------------------------------------------------------------------
class Block:
    def __init__(self, lang: str, code: str, line: int, page: str = "README.md") -> None:
        self.lang, self.code, self.line, self.page = lang, code, line, page

    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def file_name(self) -> str | None:
        first = self.code.split("\n", 1)[0]
        m = re.fullmatch(r"(?:<\?php\s+)?(?://|#|/\*)\s*([\w.-]+\.\w+)\s*(?:\*/)?", first.strip())
        return m.group(1) if m else None


class Session:
    def __init__(self, name: str, args: list[str], line: int, page: str = "README.md") -> None:
        self.name, self.line, self.page = name, line, page
        self.checkout = "checkout" in args
        self.root = "root" in args
        self.releases: list[str] = []
        self.files: list[str] = []
        self.after: Session | None = None
        self.after_name = None
        mode = None
        for a in args:
            if a in ("checkout", "root"):
                mode = None
            elif a in ("release", "files", "after"):
                mode = a
            elif mode == "release":
                self.releases.append(a)
            elif mode == "files":
                self.files.append(a)
            elif mode == "after" and self.after_name is None:
                self.after_name = a
            else:
                raise SystemExit(f"{page}:{line}: unknown word in a session directive: {a}")
        self.slots: list[list[Block]] = []  # each slot: a block and its alternatives

    def runs(self) -> list[list[Block]]:
        """One list of blocks per run: the first, then each alternative in its slot's place;
        after the blocks of the first run of the `after` session, if any."""
        before = self.after.runs()[0] if self.after else []
        n = max((len(s) for s in self.slots), default=1)
        return [before + [s[i] if i < len(s) else s[0] for s in self.slots] for i in range(n)]


def parse(text: str, page: str = "README.md", docs: bool = False):
    """The sessions, sql and rust blocks of a page. In the README every block must be covered
    by a rule; in a docs page (`docs`) only the blocks between a session directive and the end
    of its section (or `<!-- test: end -->`) are run, and must be runnable."""
    sessions: list[Session] = []
    sql: list[Block] = []
    rust: list[Block] = []
    errors: list[str] = []
    session = None
    pending = None  # "or" / "sql"
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.fullmatch(r"<!-- test: (.*?) -->", line.strip())
        if m:
            words = m.group(1).split()
            if words[0] == "session":
                session = Session(words[1], words[2:], i + 1, page)
                sessions.append(session)
            elif words == ["end"]:
                session = None
            elif words == ["or"] or words == ["sql"]:
                pending = words[0]
            else:
                errors.append(f"{page}:{i + 1}: unknown directive: {line.strip()}")
            i += 1
            continue
        m = re.fullmatch(r"```(\S*)", line)
        if m:
            start = i + 1
            end = start
            while end < len(lines) and lines[end] != "```":
                end += 1
            block = Block(m.group(1), "\n".join(lines[start:end]) + "\n", start, page)
            i = end + 1
            if docs and session is None and pending is None:
                pass  # a docs page's block outside the sessions (checked by its language's tests)
            elif block.lang == "rust":
                rust.append(block)
            elif pending == "sql":
                if block.lang != "sql":
                    errors.append(f"{page}:{start}: a `<!-- test: sql -->` block must be ```sql")
                sql.append(block)
            elif session is None:
                errors.append(f"{page}:{start}: a ```{block.lang} block outside every session: "
                              "no rule of tests/readme/test_readme.py runs it")
            elif block.lang != "sh" and not block.file_name():
                errors.append(f"{page}:{start}: a ```{block.lang} block is neither `sh` nor a file "
                              "named by its first comment line")
            elif pending == "or":
                if not session.slots:
                    errors.append(f"{page}:{start}: `or` before the session's first block")
                else:
                    session.slots[-1].append(block)
            else:
                session.slots.append([block])
            pending = None
            continue
        if line.startswith("## ") or line.startswith("# "):
            session = None  # a session ends with its section
        i += 1
    return sessions, sql, rust, errors


# --- the package registries, from dist/ -------------------------------------------------------
def npm_registry() -> tuple[http.server.ThreadingHTTPServer, str]:
    """An npm registry holding the two packages of dist/node and nothing else."""
    packuments: dict[str, dict] = {}
    tarballs: dict[str, bytes] = {}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    for path in sorted(DIST.glob("node/*.tgz")):
        data = path.read_bytes()
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            manifest = json.load(tar.extractfile("package/package.json"))  # type: ignore[arg-type]
        name, version = manifest["name"], manifest["version"]
        tarballs[path.name] = data
        manifest["_id"] = f"{name}@{version}"
        manifest["dist"] = {
            "tarball": f"{base}/-/{path.name}",
            "shasum": hashlib.sha1(data).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        }
        packuments[name] = {"name": name, "dist-tags": {"latest": version}, "versions": {version: manifest}}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = urllib.parse.unquote(self.path.split("?", 1)[0]).lstrip("/")
            if path.startswith("-/") and path[2:] in tarballs:
                body, kind = tarballs[path[2:]], "application/octet-stream"
            elif path in packuments:
                body, kind = json.dumps(packuments[path]).encode(), "application/json"
            else:
                self.send_error(404, "not in this registry (tests/readme/test_readme.py serves dist/node only)")
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server.RequestHandlerClass = Handler
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, base + "/"


# --- running a session -------------------------------------------------------------------------
def session_env(home: Path, registry: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SNOWFLAKE_", "PIP_", "npm_config_", "COMPOSER", "VIRTUAL_ENV"))
           and k not in ("PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "CMAKE_PREFIX_PATH", "CPATH", "LIBRARY_PATH")}
    real_home = Path(os.environ.get("HOME", "/root"))
    for d in ("tmp", "shm", "leases", "composer"):
        (home / d).mkdir(parents=True, exist_ok=True)
    # Packagist is not reachable here: the README's Composer steps name their own repository.
    (home / "composer" / "config.json").write_text('{"repositories": {"packagist.org": false}}\n')
    env.update(
        HOME=str(home),
        # Rust stays the user's own toolchain, whatever HOME is.
        CARGO_HOME=os.environ.get("CARGO_HOME", str(real_home / ".cargo")),
        RUSTUP_HOME=os.environ.get("RUSTUP_HOME", str(real_home / ".rustup")),
        TMPDIR=str(home / "tmp"),
        SNOWFLAKE_SHM_DIR=str(home / "shm"),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(DIST / "python"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        npm_config_registry=registry,
        npm_config_audit="false",
        npm_config_fund="false",
        npm_config_update_notifier="false",
        COMPOSER_HOME=str(home / "composer"),
        COMPOSER_CACHE_DIR=str(home / "composer-cache"),
        COMPOSER_ALLOW_SUPERUSER="1",
        COMPOSER_NO_AUDIT="1",
    )
    if (real_home / ".pyenv").is_dir():
        env.setdefault("PYENV_ROOT", str(real_home / ".pyenv"))
    return env


# In a root session: /usr/local/lib, /usr/local/include and /etc are private copies, so that
# `make install PREFIX=/usr/local` and `ldconfig` change nothing outside the session.
PRIVATE_SYSTEM = r"""
set -e
for d in /usr/local/lib /usr/local/include /etc; do
  copy="$SESSION_SYSTEM$d"
  mkdir -p "$(dirname "$copy")"
  cp -a "$d" "$copy"
  mount --bind "$copy" "$d"
done
exec bash "$1"
"""


def run_session(work: Path, session: Session, run: int, blocks: list[Block], saved: dict[str, Path],
                registry: str) -> tuple[bool, str, Path]:
    label = session.name if run == 0 else f"{session.name}-or{run}"
    top = work / label
    project = top / "project"
    project.mkdir(parents=True)
    (project / "libsnowflake").symlink_to(ROOT)
    first = session.after
    for spec in (first.releases if first else []) + session.releases:
        dest, _, pattern = spec.rpartition("=")
        matches = sorted(DIST.glob(pattern))
        if not matches:
            return False, f"no dist/{pattern}: run scripts/dist.sh", project
        (project / dest).mkdir(parents=True, exist_ok=True)
        for path in matches:
            shutil.copy(path, project / dest / path.name)
    for name in (first.files if first else []) + session.files:
        if name not in saved:
            return False, f"files {name}: no earlier session saved it", project
        shutil.copy(saved[name], project / name)
    script = ["set -euo pipefail", f"cd {str(ROOT if session.checkout else project)!r}"]
    for block in blocks:
        script.append(f"echo '>>> {block.where()} ({block.lang})'")
        if block.lang == "sh":
            script.append(block.code)
        else:
            name = block.file_name()
            script.append(f"cat > {name} <<'README_BLOCK_EOF'\n{block.code}README_BLOCK_EOF")
    (top / "session.sh").write_text("\n".join(script) + "\n")
    env = session_env(top / "home", registry)
    argv = ["bash", str(top / "session.sh")]
    if session.root:
        if os.geteuid() != 0:
            return False, "a root session needs root (unshare, mount, ldconfig)", project
        env["SESSION_SYSTEM"] = str(top / "system")
        argv = ["unshare", "--mount", "--propagation", "private", "bash", "-c", PRIVATE_SYSTEM, "bash",
                str(top / "session.sh")]
    r = subprocess.run(argv, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=1800)
    for block in blocks:
        name = block.file_name()
        if block.lang != "sh" and name and (project / name).exists():
            saved.setdefault(name, project / name)
    return r.returncode == 0, r.stdout, project


def read_pages():
    """The README's and docs/'s sessions, sql and rust blocks, and the errors of their rules."""
    text = README.read_text()
    sessions, sql, rust, errors = parse(text)
    # The docs pages' sessions (docs/c.md's install and link steps) run after the README's,
    # whose saved files (app.c) they may take.
    for page in sorted((ROOT / "docs").glob("*.md")):
        more, more_sql, _, more_errors = parse(page.read_text(), str(page.relative_to(ROOT)), docs=True)
        sessions += more
        sql += more_sql
        errors += more_errors
    by_name = {}
    for session in sessions:
        if session.name in by_name:
            errors.append(f"{session.page}:{session.line}: a second session named {session.name}")
        by_name[session.name] = session
        if session.after_name:
            session.after = by_name.get(session.after_name)
            if session.after is None:
                errors.append(f"{session.page}:{session.line}: after {session.after_name}: no such session before it")
    return text, sessions, sql, rust, errors


TEXT, SESSIONS, SQL, RUST, ERRORS = read_pages()
RUNS = [(session, run, blocks) for session in SESSIONS for run, blocks in enumerate(session.runs())]


def test_blocks_covered() -> None:
    check("README.md: every code block is covered by a rule of this test (and docs/'s session blocks are runnable)",
          not ERRORS, "\n".join(ERRORS))


def test_readme_length() -> None:
    count = TEXT.count("\n")
    check(f"README.md is under {MAX_LINES} lines ({count})", count < MAX_LINES)


def test_links() -> None:
    """Links of the README and of docs/: files that exist, anchors that are their headings."""
    def anchors(path: Path) -> set[str]:
        headings = re.findall(r"^#+ (.*)$", re.sub(r"```.*?```", "", path.read_text(), flags=re.S), flags=re.M)
        return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}

    bad = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    check("README.md and docs/*.md: relative links lead to files that exist, #anchors to headings", not bad,
          "\n".join(bad))


def test_rust_blocks_are_doctests() -> None:
    lib = (ROOT / "core" / "src" / "lib.rs").read_text()
    check(f"README.md's {len(RUST)} rust block(s) are core's doctests (core/src/lib.rs includes README.md)",
          bool(RUST) and 'include_str!("../../README.md")' in lib)


def test_error_table() -> None:
    table = TEXT[TEXT.index("<!-- errors:"):TEXT.index("<!-- /errors -->")]
    missing = [e["code"] for e in TABLES["errors"] if f"| `{e['code']}` |" not in table]
    check(f"README.md's error table lists every code of core's table ({len(TABLES['errors'])})", not missing,
          "missing: " + ", ".join(missing))


class Run:
    """What the sessions share, in the README's order: the work directory, the npm registry,
    the files sessions saved and the project each left."""

    def __init__(self, work: Path, registry: str) -> None:
        self.work, self.registry = work, registry
        self.saved: dict[str, Path] = {}
        self.projects: dict[str, Path] = {}


@pytest.fixture(scope="module")
def state() -> Iterator[Run]:
    work = Path(tempfile.mkdtemp(prefix="snowflake-readme."))
    os.chmod(work, 0o755)
    server, registry = npm_registry()
    try:
        yield Run(work, registry)
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("session,run,blocks", RUNS,
                         ids=[s.name if run == 0 else f"{s.name}-or{run}" for s, run, _ in RUNS])
def test_session(session: Session, run: int, blocks: list[Block], state: Run) -> None:
    what = f"session {session.name}" + (f", alternative {run}" if run else "") + \
        f" ({session.page}:{session.line}): " + ", ".join(f"{b.lang}:{b.where()}" for b in blocks)
    ok, out, project = run_session(state.work, session, run, blocks, state.saved, state.registry)
    check(what, ok, out)
    state.projects[session.name if run == 0 else f"{session.name}-or{run}"] = project


@pytest.mark.parametrize("block", SQL, ids=[f"{b.page}:{b.line}" for b in SQL])
def test_sql(block: Block, state: Run) -> None:
    check(f"sql block (README.md:{block.line}) in psql against a new PostgreSQL", *run_sql(state.work, block))


def test_missing_rpath(state: Run) -> None:
    soname_check(TEXT, state.projects)


def test_unknown_option(state: Run) -> None:
    unknown_option_checks(state.projects)


def test_php_without_library(state: Run) -> None:
    php_without_library_check(state.projects)


def run_sql(work: Path, block: Block) -> tuple[bool, str]:
    from servers import Servers  # tests/servers: the one way tests start servers

    (work / "pg").mkdir()
    with Servers("postgres", dir=work / "pg") as s:
        pg = s.info["postgres"]
        r = subprocess.run([os.path.join(pg["bin_dir"], "psql"), pg["dsn"], "-X", "-v", "ON_ERROR_STOP=1"],
                           input=block.code, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
    return r.returncode == 0, r.stdout


def soname_check(text: str, projects: dict[str, Path]) -> None:
    """The README's word for a program linked without an rpath to a prefix the loader does not
    search is what the loader says: the soname, and `cannot open shared object file`."""
    m = re.search(r"`(libsnowflake\.so\.[\d.]+): cannot open shared object file`", text)
    if not check("README.md quotes the loader's error for a missing rpath", bool(m)):
        return
    prefixes = sorted(projects["c"].glob("libsnowflake-*-x86_64-linux-gnu")) if "c" in projects else []
    if not check("session c left the unpacked tarball", bool(prefixes)):
        return
    prefix = prefixes[0]
    pc = subprocess.run(["pkg-config", "--cflags", "--libs", "snowflake"], capture_output=True, text=True,
                        env={**os.environ, "PKG_CONFIG_PATH": str(prefix / "lib" / "pkgconfig")})
    exe = projects["c"] / "app-without-rpath"
    build = subprocess.run(["cc", "-std=c99", str(projects["c"] / "app.c"), "-o", str(exe), *pc.stdout.split()],
                           capture_output=True, text=True)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env) if build.returncode == 0 else None
    check(f"C: linked without an rpath, the program stops with `{m.group(1)}: cannot open shared object file`"
          " as the README says", r is not None and r.returncode != 0 and m.group(0).strip("`") in r.stderr,
          build.stderr + (r.stderr if r else ""))


def php_without_library_check(projects: dict[str, Path]) -> None:
    """PHP from a checkout (the Composer path repository) with no SNOWFLAKE_LIB and no library
    installed: the message says to set SNOWFLAKE_LIB."""
    project = projects.get("php-or1")
    if project is None:
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_") and k != "LD_LIBRARY_PATH"}
    r = subprocess.run(["php", "-r", "require 'vendor/autoload.php'; try { new Snowflake\\Generator('twitter'); "
                        "echo 'loaded'; } catch (Snowflake\\SnowflakeException $e) { echo $e->getMessage(); }"],
                       cwd=project, capture_output=True, text=True, env=env)
    installed = any(Path(d, "libsnowflake.so").exists() for d in ("/usr/local/lib", "/usr/lib"))
    check("PHP without SNOWFLAKE_LIB and without the library: the message says to set SNOWFLAKE_LIB",
          installed or ("SNOWFLAKE_LIB" in r.stdout and "SNOWFLAKE_HEADER" not in r.stdout),
          r.stdout + r.stderr)


def unknown_option_checks(projects: dict[str, Path]) -> None:
    """An unknown option's message lists every option of core's table."""
    names = [o["name"] for o in TABLES["options"]]

    def lists_all(out: str) -> bool:
        return "nope" in out and all(re.search(rf"\b{n}\b", out) for n in names)

    cli = ROOT / "target" / "release" / "snowflake"
    if cli.exists():
        r = subprocess.run([str(cli), "next", "--options", "nope=1"], capture_output=True, text=True)
        check("CLI: `--options nope=1` exits 2 and its message lists every option of core's table",
              r.returncode == 2 and lists_all(r.stderr), r.stderr)
    else:
        check("CLI: target/release/snowflake exists (built by the README's `try` session)", False)
    if "php" in projects:
        r = subprocess.run(["php", "-r", "require 'vendor/autoload.php'; try { new Snowflake\\Generator("
                            "'twitter', [], ['nope' => 1]); } catch (Snowflake\\SnowflakeException $e) "
                            "{ echo $e->getMessage(); }"], cwd=projects["php"], capture_output=True, text=True)
        check("PHP: an options array with `nope` is refused with every option of core's table listed",
              lists_all(r.stdout), r.stdout + r.stderr)
    if "python" in projects:
        py = projects["python"] / ".venv" / "bin" / "python"
        r = subprocess.run([str(py), "-c", "import libsnowflake\ntry:\n libsnowflake.Generator(nope=1)\n"
                            "except Exception as e:\n print(e)"], capture_output=True, text=True)
        check("Python: Generator(nope=1) is refused with every option of core's table listed",
              lists_all(r.stdout), r.stdout + r.stderr)
    if "node" in projects:
        r = subprocess.run(["node", "-e", "const { Generator } = require('libsnowflake');\n"
                            "try { new Generator({ layout: 'twitter', nope: 1 }); } catch (e) { console.log(e.code, e.message); }"],
                           cwd=projects["node"], capture_output=True, text=True)
        camel = [o["camel"] for o in TABLES["options"]]
        check("Node: new Generator({ layout: 'twitter', nope: 1 }) is refused (ERR_SNOWFLAKE_VALUE) with every option of core's "
              "table listed, as Node spells them",
              r.stdout.startswith("ERR_SNOWFLAKE_VALUE") and "nope" in r.stdout
              and all(re.search(rf"\b{n}\b", r.stdout) for n in camel), r.stdout + r.stderr)
    libs = sorted(projects["c"].glob("libsnowflake-*-x86_64-linux-gnu/lib/libsnowflake.so")) if "c" in projects else []
    if check("C: session c left the tarball's libsnowflake.so", bool(libs)):
        c_unknown_option(libs[0], lists_all)


def c_unknown_option(lib: Path, lists_all) -> None:
    """C, through the shared library the C session unpacked: snowflake_generator_new with the
    options "nope=1" is SNOWFLAKE_STATUS_VALUE, and snowflake_last_error() lists every option."""
    import ctypes

    so = ctypes.CDLL(str(lib))
    so.snowflake_last_error.restype = ctypes.c_char_p
    layout, gen = ctypes.c_void_p(), ctypes.c_void_p()
    st_layout = so.snowflake_layout_new(b"twitter", ctypes.byref(layout))
    status = so.snowflake_generator_new(layout, b"worker=1", b"nope=1", ctypes.byref(gen))
    message = (so.snowflake_last_error() or b"").decode()
    so.snowflake_layout_free(layout)
    check("C: options \"nope=1\" is SNOWFLAKE_STATUS_VALUE and snowflake_last_error() lists every option of "
          "core's table", st_layout == 0 and status == 4 and lists_all(message), f"status {status}: {message}")

