"""The adversarial catalogue's machinery: a case, its folder, the run and every check.

A case is a command line run in a folder of its own that holds a copy of every fixture (the "world"). Before
the run every entry of the folder is recorded (regular files by SHA-256, links by target, directories, FIFOs);
after it the checks are:

- the process ended by itself within the case's timeout (no hang) and not by a signal;
- its exit code is the expected one (2 usage/parameter/output plan, 3 input, 4 output, 0 success);
- a failure printed exactly one line, "<tool>: error: ...", at most MAX_LINE bytes, containing every fragment
  of `where` (the file or option it must name);
- a failure changed nothing: the same entries, byte for byte, and no new one (no output, no hidden
  temporary `.*.part-*` file, no lock file);
- a success changed no file but those listed in `changes`, created every file in `creates`, left no hidden
  temporary or lock file, and passes the case's own `check`.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

MAX_LINE = 2048  # bytes: an error line that quotes a 50 MB field is not one line a person can read
# seconds; every case runs on 32x32 inputs of a few frames (under 1 s each here). Under ASan + UBSan
# (scripts/test-sanitize sets NANOSCOPY_SANITIZER_RUN) the tools run several times slower: four times the room.
DEFAULT_TIMEOUT = 10.0 * (4 if os.environ.get("NANOSCOPY_SANITIZER_RUN") else 1)


@dataclass
class Result:
    code: int  # exit code, or -signal
    out: str  # stdout + stderr, as the user sees them on a terminal
    seconds: float
    timed_out: bool = False


@dataclass
class Case:
    name: str
    section: str  # "1 plan", "2 generation", "3 metadata", "4 crash", "5 adversarial", "0 baseline"
    tool: str  # fit2d smre sofi frc bench: the error line starts with "<tool>: error: "
    args: Sequence[str]  # after the tool's name; relative paths (the case folder is the working directory)
    code: Union[int, tuple]  # expected exit code (a tuple: any of them)
    where: Sequence[str] = ()  # fragments the error line must contain
    setup: Optional[Callable[["Ctx"], None]] = None  # after the world is copied, before the snapshot
    creates: Sequence[str] = ()  # success: files that must exist afterwards
    changes: Sequence[str] = ()  # success: existing files the run may replace
    check: Optional[Callable[["Ctx", Result], Optional[str]]] = None  # success: extra assertion, a message on failure
    timeout: float = DEFAULT_TIMEOUT
    runner: Optional[Callable[["Ctx", "Case"], Result]] = None  # instead of one plain run (concurrency, signals)
    stdin: Optional[bytes] = None
    line: str = ""  # the start of the one line a non-zero exit prints [default: "<tool>: error: "]


@dataclass
class Ctx:
    dir: str  # the case's folder
    apps: str  # build/.../apps
    source: str
    env: dict
    shared: str = ""  # a folder beside the cases for large inputs made once ({shared} in an argument)

    def path(self, *names: str) -> str:
        return os.path.join(self.dir, *names)

    def expand(self, args: Sequence[str]) -> list:
        return [a.replace("{case}", os.path.basename(self.dir)).replace("{shared}", self.shared) for a in args]

    def tool(self, name: str) -> str:
        return os.path.join(self.apps, name, name)

    def run(self, tool: str, args: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> Result:
        return run_process([self.tool(tool), *self.expand(args)], self.dir, self.env, timeout)

    def start(self, tool: str, args: Sequence[str]) -> subprocess.Popen:
        return subprocess.Popen([self.tool(tool), *self.expand(args)], cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=default_signals)


def default_signals() -> None:
    """In the child: the signals a terminal session delivers act as they do there, even when this program runs
    under nohup or a runner that ignores some (an ignored disposition would be inherited by the tool)."""
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)


def finish(p: subprocess.Popen, started: float, timeout: float, stdin: Optional[bytes] = None) -> Result:
    try:
        out, _ = p.communicate(input=stdin, timeout=timeout)
        return Result(p.returncode, out.decode("utf-8", "replace"), time.monotonic() - started)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return Result(p.returncode, out.decode("utf-8", "replace"), time.monotonic() - started, timed_out=True)


def run_process(argv: Sequence[str], cwd: str, env: dict, timeout: float, stdin: Optional[bytes] = None) -> Result:
    started = time.monotonic()
    p = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL, start_new_session=True,
                         preexec_fn=default_signals)
    return finish(p, started, timeout, stdin)


def snapshot(root: str) -> dict:
    """Every entry under root (hidden ones too), without following links: path -> what it is."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                entries[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                entries[rel] = ("dir",)
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(full, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                entries[rel] = ("file", h.hexdigest(), st.st_ino)
            else:
                entries[rel] = ("special", stat.S_IFMT(st.st_mode))
    return entries


def is_leftover(rel: str) -> bool:
    """A temporary output or a lock: hidden `.*.part-*` names, and anything named like a lock."""
    base = os.path.basename(rel)
    return (base.startswith(".") and ".part" in base) or "lock" in base.lower()


def show(s: str, limit: int = 300) -> str:
    s = s.replace("\n", "\\n")
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


def evaluate(case: Case, ctx: Ctx, before: dict, r: Result, after: dict) -> list:
    problems = []
    if r.timed_out:
        problems.append(f"no exit within {case.timeout:g} s (hang); killed")
    elif r.code < 0:
        problems.append(f"killed by signal {-r.code} ({signal.Signals(-r.code).name})")
    expected = case.code if isinstance(case.code, tuple) else (case.code,)
    if not r.timed_out and r.code not in expected:
        problems.append(f"exit {r.code}, expected {'/'.join(map(str, expected))}")
    if r.code > 0 and not r.timed_out:
        # one error line naming the file or option
        first = r.out.split("\n")[0]
        if r.out.count("\n") != 1 or not r.out.endswith("\n"):
            problems.append(f"{r.out.count(chr(10))} output lines, expected one error line: {show(r.out)}")
        prefix = case.line or case.tool + ": error: "
        if not first.startswith(prefix):
            problems.append(f"the line does not start with '{prefix}': {show(first)}")
        if len(first.encode()) > MAX_LINE:
            problems.append(f"the error line has {len(first.encode())} bytes (at most {MAX_LINE})")
        for w in case.where:
            if w not in r.out:
                problems.append(f"the error does not name '{show(w, 60)}': {show(first)}")
    if not (r.code == 0 and 0 in expected):
        # a failure (or a run that should have failed) changes nothing and leaves nothing behind
        for rel, what in sorted(before.items()):
            if rel not in after:
                problems.append(f"{rel} was removed")
            elif after[rel][:2] != what[:2]:
                problems.append(f"{rel} was changed")
        for rel in sorted(set(after) - set(before)):
            problems.append(f"{rel} was left behind")
    else:
        for rel, what in sorted(before.items()):
            if rel in case.changes:
                continue
            if rel not in after:
                problems.append(f"input {rel} was removed")
            elif after[rel][:2] != what[:2]:
                problems.append(f"input {rel} was changed")
        for rel in case.creates:
            if rel not in after:
                problems.append(f"{rel} was not written (output: {show(r.out, 200)})")
        for rel in sorted(after):
            if is_leftover(rel) and rel not in before:
                problems.append(f"temporary or lock file {rel} left behind")
        if case.check is not None and not problems:
            try:
                message = case.check(ctx, r)
            except Exception as e:  # a check that cannot read the output is a failure of the case
                message = f"check raised {type(e).__name__}: {e}"
            if message:
                problems.append(message)
    return problems


def copy_world(world: str, dest: str) -> None:
    shutil.copytree(world, dest, symlinks=True)
