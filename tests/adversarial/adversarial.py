#!/usr/bin/env python3
"""The adversarial catalogue (issue 24 §5): every tool and subcommand against hostile command lines and files.

    adversarial.py --apps BUILD/apps [--source REPO] [-k PATTERN] [--list] [--keep DIR] [-v]

Each case (cases.py) is a command line with the exit code it must end with and the fragments (file or option
names) its one error line must contain; it runs in a folder holding a copy of the fixture world (world.py) and
must leave every input byte-identical, nothing behind on failure (no output, no hidden `.*.part-*` temporary,
no lock), never die by a signal and end within its timeout (harness.py). Sections follow issue 24:
1 the output plan (an output that is an input, or two outputs that are one file), 2 a run's files as one
generation (late errors, signals, concurrent runs, killed runs, long names), 3 metadata carried through,
4 no crash or hang on absurd input, 5 other adversarial input (odd names, empty files, directories, FIFOs),
0 the plain runs every tool must still do. Prints one line per failing case, then "N passed, M failed";
exits 1 when any case fails. No case is skipped: a case that cannot run is a failure.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cases as catalogue  # noqa: E402
import harness  # noqa: E402
import world  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", required=True, help="the build's apps folder (apps/<tool>/<tool>)")
    ap.add_argument("--source", default=os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")))
    ap.add_argument("-k", "--filter", action="append", default=[], help="only cases whose name matches (fnmatch, *x*)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--keep", help="work in this folder and keep it (default: a temporary folder, removed)")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per case, passed or not")
    a = ap.parse_args()
    a.apps = os.path.abspath(a.apps)

    all_cases = catalogue.build_cases(a.source)
    names = [c.name for c in all_cases]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        print(f"adversarial: duplicate case names: {sorted(dupes)}", file=sys.stderr)
        return 1
    selected = [c for c in all_cases if not a.filter or any(fnmatch.fnmatch(c.name, f"*{f}*") for f in a.filter)]
    if a.list:
        for c in selected:
            print(f"§{c.section:<14} {c.name}")
        print(f"{len(selected)} cases")
        return 0

    root = a.keep or tempfile.mkdtemp(prefix="nanoscopy-adversarial.")
    os.makedirs(root, exist_ok=True)
    env = dict(os.environ, LC_ALL="C.UTF-8", OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
    env.pop("NANOSCOPY_TEST_BIN", None)
    tool = lambda name: os.path.join(a.apps, name, name)  # noqa: E731
    started = time.monotonic()
    try:
        world_dir = os.path.join(root, "world")
        shared_dir = os.path.join(root, "shared")
        os.makedirs(shared_dir, exist_ok=True)
        if os.path.isdir(world_dir):
            shutil.rmtree(world_dir)
        try:
            world.build(world_dir, tool)
        except Exception as e:  # the world is every case's input: without it nothing can be judged
            print(f"adversarial: the fixture world could not be made: {e}", file=sys.stderr)
            return 1
        print(f"adversarial: fixture world made in {time.monotonic() - started:.1f} s", flush=True)
        passed, failed = 0, []
        by_section: dict = {}
        for i, case in enumerate(selected):
            case_dir = os.path.join(root, f"{i:03d}")
            if os.path.exists(case_dir):
                shutil.rmtree(case_dir)
            harness.copy_world(world_dir, case_dir)
            ctx = harness.Ctx(case_dir, a.apps, a.source, env, shared_dir)
            try:
                if case.setup:
                    case.setup(ctx)
                before = harness.snapshot(case_dir)
                if case.runner:
                    r = case.runner(ctx, case)
                else:
                    r = harness.run_process([tool(case.tool), *ctx.expand(case.args)], case_dir, env, case.timeout,
                                            case.stdin)
                after = harness.snapshot(case_dir)
                problems = harness.evaluate(case, ctx, before, r, after)
            except Exception as e:
                r = None
                problems = [f"the case could not run: {type(e).__name__}: {e}"]
            sec = by_section.setdefault(case.section, [0, 0])
            if problems:
                failed.append((case, problems))
                sec[1] += 1
                said = f" | output: {harness.show(r.out, 240)}" if r is not None and r.out else ""
                print(f"FAIL §{case.section} {case.name} [{i:03d}]: " + "; ".join(problems) + said, flush=True)
            else:
                passed += 1
                sec[0] += 1
                if a.verbose:
                    print(f"ok   §{case.section} {case.name} ({r.seconds:.2f} s)", flush=True)
                if not a.keep:
                    shutil.rmtree(case_dir, ignore_errors=True)
        for section in sorted(by_section):
            p, f = by_section[section]
            print(f"adversarial: §{section}: {p} passed, {f} failed")
        print(f"{passed} passed, {len(failed)} failed ({time.monotonic() - started:.0f} s)")
        return 1 if failed else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
