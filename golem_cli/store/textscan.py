"""Searching conversation files without the index, at about ``grep``'s speed.

When the index cannot answer (deleted, from an older golem, corrupt) or its text is behind
(thousands of files synced in), ``golem search`` reads the messages files as bytes and decodes
only those that may hold the query; the index catches up later, in the background
(builder.py). Building the trigram text index first costs about 0.3 ms per conversation,
fifty times ``grep -rlF``; this prefilter costs about what ``grep`` does.

The prefilter never drops a file that matches, so a search answered here finds exactly what
the index finds (the candidates are checked by the same code, search.py). Each literal the
query needs is reduced to its longest run of characters that appear in a file as themselves:

- Go's ``json.Marshal`` escapes only ``"``, ``\\``, control characters, ``<``, ``>``, ``&``
  and U+2028/U+2029 (and writes invalid UTF-8 as ``\\ufffd``); a run never holds those.
  Files written by other programs may escape anything (``\\u0061``, ``\\/``): a file with an
  escape Go would not write is a candidate.
- Matching ignores case by ``str.casefold``. An ASCII run is looked for in the file's bytes
  lowered (``bytes.lower`` folds exactly the ASCII letters). The few non-ASCII characters
  whose case folding yields ASCII letters (``ß`` -> ``ss``, the Kelvin sign -> ``k``, the
  ``fi`` ligature...; ``SPECIALS``) could spell the run otherwise: a file holding one of
  those whose folding shares a letter with the run is a candidate. A run with non-ASCII
  characters is looked for in the file's text, decoded and case-folded.

Reading is a loop of ``os.open``/``os.read``/``os.close`` with a buffer sized for typical
files (``open()`` and a 1 MiB buffer cost two to five times more: every read then allocates
and frees a large block). With many files and a CPU idle at that instant, half of them are
read by a forked child (POSIX).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence

from golem_cli.store.files import MESSAGES_NAME, MESSAGES_NAME_LENGTH

#: Characters Go's encoder may write escaped (and U+FFFD, which stands for invalid bytes).
_ESCAPED = frozenset('"\\<>&\u2028\u2029\ufffd') | frozenset(chr(c) for c in range(0x20))

#: Non-ASCII characters whose ``casefold()`` contains ASCII letters, with their UTF-8 bytes
#: (Unicode 14, Python 3.11; tests/store/test_textscan.py recomputes the table).
SPECIALS: dict[str, bytes] = {
    ch: ch.encode()
    for ch in "\u00df\u0130\u0149\u017f\u01f0\u1e96\u1e97\u1e98\u1e99\u1e9a\u1e9e\u212a"
    "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"
}

#: A ``\\u`` escape Go never writes: any but a control character, ``<``, ``>``, ``&``,
#: U+2028/U+2029 and U+FFFD. (An escaped backslash followed by ``u`` matches too: a harmless
#: extra candidate.) With ``\\/``, the only ways another program spells a character otherwise.
_ESCAPE = re.compile(rb"\\u")
_FOREIGN_ESCAPE = re.compile(rb"\\u(?!00[01][0-9a-f]|003c|003e|0026|202[89]|fffd)")

#: First read of a file: larger than nearly every conversation, below malloc's mmap threshold.
_FIRST_READ = 1 << 16
#: Fork a second scanner from this many files on (a fork costs about a millisecond).
_PARALLEL_FROM = 2000


def _runs(literal: str) -> list[str]:
    out: list[str] = []
    run: list[str] = []
    for ch in literal:
        if ch in _ESCAPED:
            if run:
                out.append("".join(run))
            run = []
        else:
            run.append(ch)
    if run:
        out.append("".join(run))
    return out


#: Letters from the rarest in conversation files to the commonest (English text; a-f last: every
#: file holds hexadecimal IDs). A run whose rarest letter is missing, in both cases, is missing.
_RARITY = "zqxjkvpygwmulrhsniotbfcdae"


def _anchor(run: bytes) -> tuple[bytes, bytes]:
    """The byte of ``run`` (as its two cases) least likely to be in a file: two ``memchr``
    calls that reject most files before anything else is done with them."""
    text = run.decode()
    letters = [ch for ch in _RARITY if ch in text]
    ch = letters[0] if letters else text[0]
    return ch.encode(), ch.upper().encode()


class Prefilter:
    """What a file must contain to be a candidate for a query's literals (each case-folded).
    ``admits`` costs a few passes over the bytes, each at ``memchr`` or ``bytes.find`` speed.
    (A plain class: a dataclass costs a millisecond to create at import.)"""

    __slots__ = ("anchors", "ascii_runs", "everything", "slash", "specials", "text_runs")

    def __init__(
        self,
        ascii_runs: tuple[bytes, ...],
        anchors: tuple[tuple[bytes, bytes], ...],
        text_runs: tuple[str, ...],
        specials: tuple[bytes, ...],
        slash: bool,
        everything: bool,
    ) -> None:
        self.ascii_runs = ascii_runs
        self.anchors = anchors
        self.text_runs = text_runs
        self.specials = specials
        self.slash = slash  # a run holds "/", which other programs may write as "\\/"
        self.everything = everything  # some literal has no run at all: every file is a candidate

    @classmethod
    def of(cls, literals: Sequence[str]) -> Prefilter:
        ascii_runs: list[bytes] = []
        text_runs: list[str] = []
        everything = False
        for literal in literals:
            runs = _runs(literal)
            if not runs:
                everything = True
                continue
            longest = max(runs, key=len)
            plain = max((piece for run in runs for piece in re.split(r"[^\x00-\x7f]+", run)), key=len)
            if plain and (len(plain) >= 3 or len(plain) == len(longest)):
                ascii_runs.append(plain.encode())
            else:
                text_runs.append(longest)
        letters = set(b"".join(ascii_runs).decode())
        specials = tuple(b for ch, b in SPECIALS.items() if letters & set(ch.casefold()))
        anchors = tuple(_anchor(run) for run in ascii_runs)
        slash = any("/" in literal for literal in literals)
        return cls(tuple(ascii_runs), anchors, tuple(text_runs), specials, slash, everything)

    def admits(self, data: bytes) -> bool:
        """Whether the file with these bytes may hold every literal (never False when it does):
        every run is in it as itself (case aside), or something could spell a run otherwise."""
        if self.everything:
            return True
        for low, high in self.anchors:
            if low not in data and high not in data:
                return self._hidden(data)
        if self.ascii_runs:
            lowered = data.lower()
            for run in self.ascii_runs:
                if run not in lowered:
                    return self._hidden(data)
        if self.text_runs:
            text = data.decode("utf-8", "replace").casefold()
            return all(run in text for run in self.text_runs) or self._hidden(data)
        return True

    def _hidden(self, data: bytes) -> bool:
        """Something that could spell a run otherwise is in the file: an escape Go would not
        write, or a special character (see the module docstring)."""
        first = _ESCAPE.search(data)  # a plain literal: SRE finds it faster than bytes.find
        if first is not None and _FOREIGN_ESCAPE.search(data, first.start()) is not None:
            return True
        if self.slash and b"\\/" in data:
            return True
        return bool(self.specials) and not data.isascii() and any(s in data for s in self.specials)


class Scan:
    """The outcome of reading files: the names that may match with their sizes, and files
    that could not be read (name -> the reason, as the listing words it)."""

    __slots__ = ("candidates", "problems")

    def __init__(self, candidates: list[tuple[str, int]], problems: dict[str, str]) -> None:
        self.candidates = candidates
        self.problems = problems


def problem_text(e: Exception) -> str:
    """How an unreadable file is described in the index and in warnings (as ``build_entry``)."""
    return getattr(e, "strerror", None) or str(e)


def read_carefully(directory: str, name: str, limit: int) -> bytes | None:
    """The bytes of a file the quick read could not take (larger than it, or refused), by
    ``files.read_regular``, the store's one careful reader (its errors are the problems the
    index records); None for anything but a regular file (a symlink, a FIFO, a directory),
    which the index ignores too."""
    path = f"{directory}{os.sep}{name}"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    from golem_cli.store.files import read_regular

    return read_regular(path, limit, follow=False)


def _scan_part(directory: str, names: Sequence[str], prefilter: Prefilter, limit: int) -> Scan:
    # The loop every file goes through: one open, one read, one close and the prefilter.
    # Anything unusual (a large file, a symlink, a directory, an error) is read carefully.
    from golem_cli.store.files import opener

    open_name, done = opener(directory)
    out = Scan([], {})
    admits = prefilter.admits
    read, close, first = os.read, os.close, min(_FIRST_READ, limit + 1)
    try:
        for name in names:
            data: bytes | None
            try:
                fd = open_name(name)
            except FileNotFoundError:
                continue  # removed since the directory was listed
            except OSError:
                data = None
            else:
                try:
                    data = read(fd, first)
                except OSError:
                    data = None
                finally:
                    close(fd)
            if data is None or len(data) == first or not data:
                try:
                    data = read_carefully(directory, name, limit)
                except FileNotFoundError:
                    continue
                except OSError as e:
                    out.problems[name] = problem_text(e)
                    continue
                if data is None:
                    continue
            if admits(data):
                out.candidates.append((name, len(data)))
    finally:
        done()
    return out


def scan_files(directory: str, names: Sequence[str], prefilter: Prefilter, limit: int) -> Scan:
    """Read the files ``names`` of ``directory`` and keep those ``prefilter`` admits."""
    if not names:
        return Scan([], {})
    import gc

    enabled = gc.isenabled()
    gc.disable()  # nothing here makes cycles; collections would only cost time (5% of a scan)
    try:
        if len(names) < _PARALLEL_FROM or not hasattr(os, "fork") or not _second_scanner_pays():
            return _scan_part(directory, names, prefilter, limit)
        return _scan_forked(directory, names, prefilter, limit)
    finally:
        if enabled:
            gc.enable()


#: Where Linux says how many threads are runnable at this instant: ``0.52 0.61 0.58 2/94 1234``
#: (the fourth field's first number; the reading process is one of them).
LOADAVG = "/proc/loadavg"


def _second_scanner_pays(loadavg: str = LOADAVG) -> bool:
    """Whether a forked second scanner shortens the scan: a CPU is idle at this instant (fewer
    threads runnable than CPUs, this process included). Measured on 2 CPUs
    (benchmarks/scan_fork.py and search_noindex.py, results/scan-fork.txt): with a CPU idle
    the fork halves the scan's wall time (0.53-0.56x); with one other thread running, one CPU
    runs half the scan beside it, 10-20% slower; with every CPU shared already, a scan alone
    gains wall time from its second share but the whole command loses (1.2-1.3x the wall of
    the single scan, 15-40% more CPU).

    The count is instantaneous: the 1-minute load average it replaces lags a minute behind (a
    burst that just ended kept the scan from forking, one that just began went unseen). Where
    the count cannot be read, the load average decides, as before."""
    cpus = os.cpu_count() or 1
    if cpus < 2 or len(_usable_cpus()) < 2:
        return False
    try:
        fd = os.open(loadavg, os.O_RDONLY)
        try:
            fields = os.read(fd, 256).split()
        finally:
            os.close(fd)
        return int(fields[3].partition(b"/")[0]) < cpus
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0] < cpus - 1
    except (AttributeError, OSError):
        return False


def _usable_cpus() -> set[int] | range:
    """The CPUs this process may run on (``taskset``, a container's cpuset)."""
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):  # not on macOS or Windows
        return range(os.cpu_count() or 1)


def _scan_forked(directory: str, names: Sequence[str], prefilter: Prefilter, limit: int) -> Scan:
    """Half the files (every other name, so both halves hold alike) in a forked child, which
    sends its findings back as lines on a pipe."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return _scan_part(directory, names, prefilter, limit)
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        status = 1
        try:
            os.close(read_end)
            part = _scan_part(directory, names[1::2], prefilter, limit)
            lines = [f"c\t{n}\t{size}" for n, size in part.candidates]
            lines += [f"p\t{n}\t{why}" for n, why in part.problems.items()]
            view = memoryview("\n".join(lines).encode("utf-8", "surrogateescape"))
            while view:
                view = view[os.write(write_end, view) :]
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        mine = _scan_part(directory, names[0::2], prefilter, limit)
        chunks = []
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    if status != 0:  # the child failed: do its half here
        theirs = _scan_part(directory, names[1::2], prefilter, limit)
    else:
        theirs = Scan([], {})
        for line in b"".join(chunks).decode("utf-8", "surrogateescape").split("\n"):
            kind, _, rest = line.partition("\t")
            if kind == "c":
                name, _, size = rest.partition("\t")
                theirs.candidates.append((name, int(size)))
            elif kind == "p":
                name, _, why = rest.partition("\t")
                theirs.problems[name] = why
    return Scan(mine.candidates + theirs.candidates, mine.problems | theirs.problems)


def message_files(directory: str) -> tuple[list[str], bool]:
    """The names in ``directory`` that are messages files (``<id>.json``), and whether the
    directory exists. Sidecars, temporary files and other names are left out, as the index
    leaves them out; what is not a regular file is skipped when it is read."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return [], False
    match = MESSAGES_NAME.match
    return [name for name in names if len(name) == MESSAGES_NAME_LENGTH and match(name) is not None], True
