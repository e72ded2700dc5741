"""Issue 13's table: list, search, index rebuild, resume and the history round trip, at 1,000 /
10,000 / 100,000 conversations and 20,000 / 150,000-message histories (the chat's start:
chat_startup.py).

Every figure is printed beside its yardstick measured in the same run (``python -c pass``,
``grep -rlF``, a Python loop that reads every file, ``orjson``), as medians of interleaved
repetitions, with peak memory: the command's own maximum resident set, measured as every
benchmark here measures it (``_measure.py``: not the benchmark's memory, which Linux would
count in a child started from it).

    python benchmarks/scale.py [--sizes 1000,10000,100000] [--histories 20000,150000]
                               [--reps 5] [--roundtrip-mb 81] [--keep DIR] [--skip resume,roundtrip]

Stores are generated directly in golem's file format (as cli_speed.py does): going through
``Store.create`` would fsync every file and measure the disk. ``pip install -e '.[bench]'``
brings orjson. Run ``python -m compileall -q golem_cli`` first (PYTHONDONTWRITEBYTECODE is set).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from cli_speed import uuid7_at, write_conversation, write_store
from golem_cli.core.codec.history import dump_history
from golem_cli.store import Store
from history_roundtrip import generate as generate_history

GOLEM = str(Path(sys.executable).parent / "golem")
PY = sys.executable
MISS = "zebraquantum"  # a word no generated conversation contains
COMMON_MISS = "notthereatall"  # nor this one, made of letters every conversation has
HIT = "the of and"  # in 141 of the 10,000 generated conversations: the newest 20 are decoded and shown
EVERYWHERE = "the"  # in nearly every message of every generated conversation
READ_LOOP = "import os,sys\nd=sys.argv[1]\nfor n in os.listdir(d):\n    open(os.path.join(d,n),'rb').read()"


# --- running and measuring ---------------------------------------------------------------------


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one run of ``cmd`` (a search that finds nothing exits 1)."""
    done = _measure.run(cmd, env, ok=(0, 1))
    return done.wall, done.peak_mib


def medians(cmds: dict[str, list[str]], env: dict[str, str], reps: int,
            before: Callable[[str], None] | None = None) -> dict[str, tuple[float, float]]:  # fmt: skip
    """Interleaved repetitions (load on the machine hits every command alike): median ms and
    the largest peak RSS. ``before(name)`` runs untimed before each run (e.g. drop the index)."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(reps):
        for name, cmd in cmds.items():
            if before is not None:
                before(name)
            samples[name].append(run(cmd, env))
    return {n: (statistics.median(s[0] for s in v) * 1000, max(s[1] for s in v)) for n, v in samples.items()}


ROWS: list[tuple[str, str, float, float, str]] = []


def row(group: str, name: str, ms: float, mib: float, against: str = "") -> None:
    ROWS.append((group, name, ms, mib, against))
    print(f"  {name:<58}{ms:>10.1f} ms{mib:>8.0f} MiB  {against}", flush=True)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


# --- stores ------------------------------------------------------------------------------------


def drop_index(home: Path) -> None:
    """Remove the index golem keeps beside the conversations. An earlier golem (``--before``
    trees) may have a background builder at it (``index.build.lock``); it notices the deletion
    and stops, and is waited for, so that one measurement does not pay for another's work."""
    while True:
        for path in home.iterdir():
            if path.name.startswith("index.sqlite") or path.name == "index.json":
                path.unlink(missing_ok=True)
        if not _builder_running(home):
            break
        time.sleep(0.05)


def _builder_running(home: Path) -> bool:
    import fcntl

    try:
        fd = os.open(home / "index.build.lock", os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def drop_sidecars(home: Path) -> None:
    """Remove every ``.meta.json`` sidecar: the store as a sync tool brings it from elsewhere."""
    with os.scandir(home / "conversations") as entries:
        for entry in entries:
            if entry.name.endswith(".meta.json"):
                os.unlink(entry.path)


def store_pair(root: Path, count: int) -> tuple[Path, Path]:
    """Two stores of ``count`` generated conversations under ``root`` (generated once, then
    reused): one with a sidecar beside every messages file, as golem writes it, and one with
    the same messages files only (hard links), as a store synced in from elsewhere."""
    home, bare = root / f"store-{count}", root / f"store-{count}-no-sidecars"
    if not home.exists():
        t0 = time.perf_counter()
        write_store(Store(home), count, random.Random(7))
        print(f"generated {count:,} conversations in {time.perf_counter() - t0:.0f} s", flush=True)
    if not bare.exists():
        clone(home, bare, sidecars=False)
    return home, bare


def clone(home: Path, into: Path, *, sidecars: bool = True) -> None:
    """A copy of the store at ``home``: its messages files hard-linked (nobody writes them
    here), its sidecars copied (a rebuild may replace them), no index."""
    (into / "conversations").mkdir(parents=True, mode=0o700)
    with os.scandir(home / "conversations") as entries:
        for entry in entries:
            target = into / "conversations" / entry.name
            if not entry.name.endswith(".meta.json"):
                os.link(entry.path, target)
            elif sidecars:
                shutil.copy2(entry.path, target)


def build_index(home: Path, env: dict[str, str]) -> None:
    """Bring the index up to date, rows and text: a search does it before it answers."""
    run([GOLEM, "search", MISS], env)


def store_rows(home: Path, count: int, env: dict[str, str], reps: int, sidecars: bool = True) -> None:
    env = env | {"GOLEM_HOME": str(home)}
    conv = str(home / "conversations")
    label = f"{count:,} conversations" + ("" if sidecars else " without sidecars (synced in)")
    print(f"\n{label}; load average {os.getloadavg()[0]:.1f}")
    build_index(home, env)  # and warm the page cache
    warm = medians({
        "floor": [PY, "-c", "pass"],
        "list": [GOLEM, "list", "--limit", "20"],
        "search": [GOLEM, "search", MISS],
        "common": [GOLEM, "search", EVERYWHERE],
        "grep": ["grep", "-rlF", MISS, conv],
        "read": [PY, "-c", READ_LOOP, conv],
    }, env, reps)  # fmt: skip
    floor, grep, read = warm["floor"][0], warm["grep"][0], warm["read"][0]
    row(label, "python -c pass", *warm["floor"])
    row(label, f"grep -rlF {MISS}", *warm["grep"])
    row(label, "python loop reading every file", *warm["read"])
    row(label, "golem list --limit 20 (warm)", *warm["list"], f"{ratio(warm['list'][0], floor)} python -c pass")
    for name, text in (("search", MISS), ("common", EVERYWHERE)):
        row(label, f"golem search {text!r} (warm)", *warm[name],
            f"{ratio(warm[name][0], grep)} grep, {ratio(warm[name][0], read)} read loop")  # fmt: skip
    cold_reps = max(1, min(reps, 3 if count >= 100_000 else reps))

    def cold(name: str) -> None:
        drop_index(home)
        if name == "first" and not sidecars:
            drop_sidecars(home)

    cold_runs = medians({
        "grep": ["grep", "-rlF", MISS, conv],
        "read": [PY, "-c", READ_LOOP, conv],
        "first": [GOLEM, "list", "--limit", "20"],
        "list": [GOLEM, "list", "--limit", "20"],
        "search": [GOLEM, "search", MISS],
    }, env, cold_reps, before=cold)  # fmt: skip
    grep, read = cold_runs["grep"][0], cold_runs["read"][0]
    row(label, f"grep -rlF {MISS} (in the runs below)", *cold_runs["grep"])
    row(label, "python loop reading every file (in the runs below)", *cold_runs["read"])
    if not sidecars:
        row(label, "index rebuild, first time (no sidecars there)", *cold_runs["first"],
            f"{ratio(cold_runs['first'][0], read)} read loop")  # fmt: skip
    row(label, "index rebuild: golem list --limit 20, no index", *cold_runs["list"],
        f"{ratio(cold_runs['list'][0], read)} read loop")  # fmt: skip
    row(label, f"golem search {MISS!r}, no index (built first)", *cold_runs["search"],
        f"{ratio(cold_runs['search'][0], grep)} grep, {ratio(cold_runs['search'][0], read)} read loop")  # fmt: skip
    build_index(home, env)


# --- resume ------------------------------------------------------------------------------------


def resume_rows(root: Path, sizes: list[int], env: dict[str, str], reps: int) -> None:
    home = root / "resume-home"
    store = Store(home)
    store.conversations_dir.mkdir(parents=True, mode=0o700, exist_ok=True)
    env = env | {"GOLEM_HOME": str(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    for n in sizes:
        messages = generate_history(n)
        cid = uuid7_at(time.time() - 60, random.Random(n))
        write_conversation(store, cid, messages, time.time() - 60, "offline:echo")
        path = store.messages_path(cid)
        label = f"resume, {n:,} messages ({path.stat().st_size / 1e6:.0f} MB)"
        print(f"\n{label}")
        yard = [PY, "-c", "import sys,time;from golem_cli.core.codec.history import load_history;"
                "from golem_cli.core.history.repair import normalize_history;"
                "d=open(sys.argv[1],'rb').read();t=time.perf_counter();normalize_history(load_history(d));"
                "print(time.perf_counter()-t)", str(path)]  # fmt: skip
        samples: dict[str, list[tuple[float, float]]] = {"floor": [], "resume": [], "load": []}
        for _ in range(reps):
            samples["floor"].append(run([PY, "-c", "pass"], env))
            resumed = _measure.on_terminal([GOLEM, "resume", cid], env, "you>")
            samples["resume"].append((resumed.wall, resumed.peak_mib))
            loaded = _measure.run(yard, env, stdout=True)  # prints its time inside the process
            samples["load"].append((float(loaded.stdout), loaded.peak_mib))
        m = {k: statistics.median(s[0] for s in v) * 1000 for k, v in samples.items()}
        peak = {k: max(s[1] for s in v) for k, v in samples.items()}
        row(label, "python -c pass", m["floor"], peak["floor"])
        row(label, "load_history + normalize_history (in process)", m["load"], peak["load"])
        row(label, "golem resume ID -> prompt", m["resume"], peak["resume"],
            f"{ratio(m['resume'], m['load'] + m['floor'])} (python -c pass + load + normalize)")  # fmt: skip


# --- history round trip ------------------------------------------------------------------------

# The yardstick does what `golem normalize FILE -o OUT` does with orjson: read the file, decode,
# encode, write OUT as golem writes it (a temporary file, fsync, rename).
ORJSON_ROUNDTRIP = """
import os, sys, orjson
src, out = sys.argv[1], sys.argv[2]
with open(src, 'rb') as f:
    data = f.read()
encoded = orjson.dumps(orjson.loads(data))
tmp = out + '.tmp'
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
view = memoryview(encoded)
while view:
    view = view[os.write(fd, view):]
os.fsync(fd)
os.close(fd)
os.replace(tmp, out)
"""


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + sys of the child) and peak RSS (MiB) of one run."""
    # Run from elsewhere: `python -m` puts the working directory first on sys.path.
    done = _measure.run(cmd, env, cwd=tempfile.gettempdir())
    return done.wall, done.cpu, done.peak_mib


def roundtrip_rows(root: Path, megabytes: float, env: dict[str, str], reps: int, before: Path | None = None) -> None:
    """What a user runs, `golem normalize FILE -o OUT` (the real entry point: read, load,
    normalize, report, write atomically), against the same work done with orjson. Peak memory
    is the child's maximum RSS; beside it, that less the same command's on a one-message file
    (the interpreter and its imports), as a multiple of the file: the file's own bytes, read by
    both, are in it. ``before``: a checkout whose golem is timed too, interleaved."""
    n = int(megabytes * 1e6 / 540)  # history_roundtrip's messages average about 540 bytes
    path, small = root / "roundtrip.json", root / "roundtrip-small.json"
    for target, count in ((path, n), (small, 1)):
        target.write_bytes(dump_history(generate_history(count)))
    size = path.stat().st_size
    label = f"load + normalize + dump, {size / 1e6:.0f} MB ({n:,} messages)"
    print(f"\n{label}")
    out = root / "roundtrip-out.json"
    sources = {"golem": Path(__file__).resolve().parent.parent} | ({"before": before} if before else {})

    def commands(src: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
        cmds = {"orjson": ([PY, "-c", ORJSON_ROUNDTRIP, str(src), str(out)], env)}
        for name, tree in sources.items():
            cmds[name] = (
                [PY, "-m", "golem_cli", "normalize", str(src), "-o", str(out)],
                env | {"PYTHONPATH": str(tree)},
            )
        return cmds

    floor = {name: min(measure(cmd, e)[2] for _ in range(2)) for name, (cmd, e) in commands(small).items()}
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in floor}
    for _ in range(reps):
        for name, (cmd, e) in commands(path).items():
            samples[name].append(measure(cmd, e))
            if name != "orjson":
                assert out.read_bytes() == path.read_bytes(), "a clean golem file must round-trip byte for byte"
    file_mib = size / 2**20
    wall = {k: statistics.median(s[0] for s in v) * 1000 for k, v in samples.items()}
    cpu = {k: statistics.median(s[1] for s in v) * 1000 for k, v in samples.items()}
    peak = {k: max(s[2] for s in v) for k, v in samples.items()}
    above = {k: (peak[k] - floor[k]) / file_mib for k in peak}  # the run's own memory, in files
    for name, what in (("orjson", "orjson read, loads, dumps, write OUT"),
                       ("before", f"golem normalize FILE -o OUT ({before})"),
                       ("golem", "golem normalize FILE -o OUT")):  # fmt: skip
        if name not in samples:
            continue
        against = "" if name == "orjson" else f"{ratio(wall[name], wall['orjson'])} orjson wall, "
        against += "" if name == "orjson" else f"{ratio(cpu[name], cpu['orjson'])} CPU; "
        against += f"CPU {cpu[name]:.0f} ms; peak {above[name]:.1f}x the file with its bytes"
        against += f", {above[name] - 1:.1f}x beyond them"
        row(label, what, wall[name], peak[name], against)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--histories", default="20000,150000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--roundtrip-mb", type=float, default=81)
    parser.add_argument("--skip", default="", help="comma-separated: stores,resume,roundtrip")
    parser.add_argument("--keep", type=Path, help="generate into DIR and keep it (reused when it exists)")
    parser.add_argument("--before", type=Path, help="a checkout whose `golem normalize` is timed too (roundtrip)")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    root = args.keep or Path(tempfile.mkdtemp(prefix="golem-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env["GOLEM_HOME"] = str(root / "unused-home")
    print(f"peak memory: each command's own; none shows less than {_measure.floor_mib():.0f} MiB (see _measure.py)")
    try:
        if "stores" not in skip:
            for count in (int(s) for s in args.sizes.split(",") if s):
                home, bare = store_pair(root, count)
                store_rows(home, count, env, args.reps)
                store_rows(bare, count, env, args.reps, sidecars=False)
        if "resume" not in skip:
            resume_rows(root, [int(s) for s in args.histories.split(",") if s], env, args.reps)
        if "roundtrip" not in skip:
            roundtrip_rows(root, args.roundtrip_mb, env, max(3, args.reps // 2), args.before)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
