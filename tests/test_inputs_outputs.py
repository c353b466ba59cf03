"""Hardening of what robodyn reads and writes (issue 12, sections 3 and 4).

Outputs: a missing or regular file is replaced atomically; a symlink is *followed* (its final target gets the
content, the link stays a link); a character device or a FIFO is written through (no rename onto it, so
``/dev/null`` stays a device and ``/dev/full`` is an error); a FIFO nobody reads and a directory are refused
with one line. A set of files (``write_all``, ``simplify-model``) is written all or nothing.

Inputs: parameter values, special files, oversized files, duplicate keys, built-in names shadowed by files,
the link cap, unusable paths, unordered vectors, huge sample counts and operating-point strings are each one
:class:`~robodyn.errors.ModelError` (exit 2 and one ``error:`` line on the command line), never a traceback
and never a hang: whatever could block runs under a wall-clock bound (:func:`bounded`)."""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

import pytest
import sympy
import yaml
from typer.testing import CliRunner, Result

import robodyn as rd
from robodyn import cli as cli_module
from robodyn import numeric
from robodyn.analysis.check import check as run_check
from robodyn.analysis.linear import linearize_symbolic
from robodyn.analysis.simulation import SimulationError
from robodyn.analysis.torques import torque_history
from robodyn.analysis.trajectories import MAX_SAMPLES, load_trajectory
from robodyn.cli import app
from robodyn.errors import ModelError, ModelWarning
from robodyn.formats.model_file import MAX_FILE_BYTES
from robodyn.model.files import SHOWN_PATH_CHARS, atomic_path, atomic_write, path_exists, write_all
from robodyn.model.manipulator import MAX_LINKS, Link, Manipulator

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, device files and POSIX permissions")

#: Wall-clock bound of anything that could block (a FIFO opened without a writer or reader blocks forever).
BOUND = 30.0
#: "Refused quickly": a refusal that reads or allocates nothing takes milliseconds; this leaves ample slack.
QUICK = 5.0
DOUBLE = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0}
DOUBLE_CLI = [arg for name, value in DOUBLE.items() for arg in ("--param", f"{name}={value}")]
ROW = {"joint": "R", "a": 0.5, "mass": 1.0, "com": [0.25, 0, 0], "inertia": [0.01, 0.02, 0.03]}

runner = CliRunner()
T = TypeVar("T")


# -- helpers -------------------------------------------------------------------------------------------


def bounded(call: Callable[[], T], seconds: float = BOUND) -> T:
    """``call()`` in a daemon thread: a call still running after ``seconds`` fails the test (a regression hangs
    that thread, not the suite); its exception, if any, is raised here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s: it blocks instead of refusing")
    if "error" in box:
        raise box["error"]
    return box["value"]


def cli(*args: str | Path) -> Result:
    """``robodyn ARGS`` in-process, under :data:`BOUND`."""
    return bounded(lambda: runner.invoke(app, [str(a) for a in args]))


def refused(result: Result, *words: str) -> str:
    """The command line's refusal: exit 2, stderr exactly one line ``error: ...`` holding each of ``words``,
    no traceback anywhere; the line is returned."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception  # typer.Exit, not an uncaught error
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def succeeded(result: Result) -> None:
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)


def listing(directory: Path) -> list[str]:
    """Every name under ``directory``, hidden temporaries included, relative and sorted."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def one_line_model_error(call: Callable[[], object], *words: str, seconds: float = BOUND) -> ModelError:
    """``call()`` raises a :class:`ModelError` (not a bare OSError, ValueError, NameError...) within ``seconds``,
    one line holding each of ``words`` and no control character."""
    with pytest.raises(ModelError) as info:
        bounded(call, seconds)
    message = str(info.value)
    assert message.isprintable(), repr(message)  # one line: no newline, no NUL
    for word in words:
        assert word in message, (word, message)
    return info.value


def char_device(tmp_path: Path, name: str, major: int, minor: int) -> Path:
    """A character device like ``/dev/<name>``: a private copy made with mknod where allowed (as root, a
    regression that renames onto the device would otherwise replace the machine's own /dev/null with a
    regular file), else the real one, only when not root (an ordinary user cannot rename onto /dev)."""
    copy = tmp_path / name
    try:
        os.mknod(copy, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        with open(copy, "wb"):  # a nodev mount refuses to open device nodes
            pass
        return copy
    except OSError:
        copy.unlink(missing_ok=True)
    real = Path("/dev") / name
    if os.geteuid() == 0 or not real.exists() or not stat.S_ISCHR(os.stat(real).st_mode):
        pytest.skip(f"no private copy of /dev/{name} can be made here and the real one is not safe to use")
    return real


def is_char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


class FifoReader:
    """Reads a FIFO in a thread until its writer closes it. The read end is opened here, before any writer
    (without blocking), so a writer that opens the FIFO without blocking finds a reader."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            try:
                chunk: bytes | None = os.read(self.fd, 1 << 16)
            except BlockingIOError:  # a writer is there, with nothing written yet
                chunk = None
            if chunk:
                self.data += chunk
            elif chunk == b"" and self.data:  # end of file: the writer has closed it
                return
            else:
                time.sleep(0.005)

    def result(self) -> bytes:
        self.thread.join(BOUND)
        os.close(self.fd)
        return bytes(self.data)


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.fixture(scope="module")
def derived_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """What ``robodyn derive two_link_fu -f json -o FILE`` writes to a regular file."""
    path = tmp_path_factory.mktemp("reference") / "eq.json"
    succeeded(cli("derive", "two_link_fu", "-f", "json", "-o", path))
    data = path.read_bytes()
    assert json.loads(data)["robot"] == "two_link_fu"
    return data


def derive_to(target: Path) -> Result:
    return cli("derive", "two_link_fu", "-f", "json", "-o", target)


def fail_on_call(monkeypatch: pytest.MonkeyPatch, number: int, error: int = errno.ENOSPC) -> list[tuple[Any, Any]]:
    """Make call ``number`` (1-based) of ``os.replace`` fail with ``error`` (a disk that fills up part way
    through a set of files); every call is recorded."""
    calls: list[tuple[Any, Any]] = []
    real = os.replace

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        calls.append((src, dst))
        if len(calls) == number:
            raise OSError(error, os.strerror(error), str(dst))
        real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return calls


@pytest.fixture
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temporary directory, redirected here: writing through a device stages the content there."""
    directory = tmp_path / "system-tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


# == 3. Outputs ========================================================================================


def test_null_device_is_written_through_and_stays_a_device(tmp_path: Path, private_tempdir: Path) -> None:
    null = char_device(tmp_path, "null", 1, 3)
    result = derive_to(null)
    succeeded(result)
    assert f"wrote {null}" in result.stderr
    assert is_char_device(null)
    assert atomic_write(null, "text\n") == null
    with atomic_path(null) as tmp:
        tmp.write_bytes(b"bytes")
    assert is_char_device(null)
    assert listing(private_tempdir) == []  # the staging file is gone
    if null.parent == tmp_path:
        assert listing(tmp_path) == ["null", "system-tmp"]  # no temporary left beside it


def test_full_device_is_an_error_with_exit_2_and_nothing_left(tmp_path: Path, private_tempdir: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    full = char_device(tmp_path, "full", 1, 7)
    line = refused(derive_to(full), str(full), "No space left")
    assert "wrote" not in line
    assert is_char_device(full)
    with pytest.raises(OSError) as info:
        atomic_write(full, "text\n")
    assert info.value.errno == errno.ENOSPC
    assert is_char_device(full)
    assert listing(private_tempdir) == []
    if full.parent == tmp_path:
        assert listing(tmp_path) == ["full", "system-tmp"]


@pytest.mark.parametrize("existing", [True, False], ids=["target-exists", "target-missing"])
def test_symlink_output_is_followed_and_the_link_stays(tmp_path: Path, derived_json: bytes, existing: bool) -> None:
    """Documented behaviour: a symlink is followed; its final target (through a chain of links, in another
    directory) is replaced atomically and every link is left as it was."""
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    target = tmp_path / "real" / "eq.json"
    if existing:
        target.write_text("old\n")
    middle = tmp_path / "links" / "middle.json"
    middle.symlink_to(Path("..") / "real" / "eq.json")
    link = tmp_path / "links" / "eq.json"
    link.symlink_to("middle.json")
    succeeded(derive_to(link))
    assert link.is_symlink() and os.readlink(link) == "middle.json"
    assert middle.is_symlink() and os.readlink(middle) == str(Path("..") / "real" / "eq.json")
    assert target.read_bytes() == derived_json
    assert listing(tmp_path) == ["links", "links/eq.json", "links/middle.json", "real", "real/eq.json"]
    atomic_write(link, "through the API\n")
    assert link.is_symlink() and target.read_text() == "through the API\n"


def test_dangling_symlink_into_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    link = tmp_path / "eq.json"
    link.symlink_to(tmp_path / "missing" / "eq.json")
    refused(derive_to(link), str(link), "cannot write")
    assert link.is_symlink() and listing(tmp_path) == ["eq.json"]


def test_fifo_output_is_written_through_to_its_reader(tmp_path: Path, derived_json: bytes,
                                                      private_tempdir: Path) -> None:
    pipe = fifo(tmp_path / "eq.json")
    reader = FifoReader(pipe)
    succeeded(derive_to(pipe))
    assert reader.result() == derived_json
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    reader = FifoReader(pipe)
    atomic_write(pipe, "through the API\n")
    assert reader.result() == b"through the API\n"
    assert listing(tmp_path) == ["eq.json", "system-tmp"] and listing(private_tempdir) == []


def test_fifo_output_nobody_reads_is_refused_at_once(tmp_path: Path, private_tempdir: Path) -> None:
    pipe = fifo(tmp_path / "eq.json")
    refused(derive_to(pipe), str(pipe), "no process is reading this FIFO")
    with pytest.raises(OSError) as info:
        bounded(lambda: atomic_write(pipe, "x"), QUICK)
    assert info.value.errno == errno.ENXIO
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert listing(tmp_path) == ["eq.json", "system-tmp"] and listing(private_tempdir) == []


def absent_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A character device with no driver behind it, so that opening it gives ENXIO: a node of an unused major
    number where mknod is allowed (root), else a copy of /dev/null whose opening for writing is made to fail
    with ENXIO."""
    node = tmp_path / "absent"
    with suppress(OSError):
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(4000, 0))
    if node.exists():
        try:
            os.close(os.open(node, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                return node
        node.unlink()
    device = char_device(tmp_path, "null", 1, 3)
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path) == str(device) and flags & os.O_WRONLY:
            raise OSError(errno.ENXIO, os.strerror(errno.ENXIO), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    return device


def test_character_device_without_a_device_is_not_called_a_fifo(tmp_path: Path, private_tempdir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """ENXIO on opening a character device means no device is behind it, not that no process reads a FIFO."""
    device = absent_device(tmp_path, monkeypatch)
    line = refused(derive_to(device), str(device), "no device behind this character device")
    assert "FIFO" not in line
    with pytest.raises(OSError) as info:
        bounded(lambda: atomic_write(device, "x"), QUICK)
    assert info.value.errno == errno.ENXIO and "FIFO" not in str(info.value)
    assert is_char_device(device) and listing(private_tempdir) == []


def test_directory_as_output_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    refused(derive_to(directory), str(directory), "is a directory")
    with pytest.raises(IsADirectoryError):
        atomic_write(directory, "x")
    assert listing(tmp_path) == ["out"]


# -- write_all: all files or none ------------------------------------------------------------------------

FILES = {"a.txt": "first\n", "b.bin": b"\x00second", "c.txt": "third\n"}


def test_write_all_writes_every_file(tmp_path: Path) -> None:
    out = tmp_path / "x" / "y"
    assert write_all(out, FILES) == [out / name for name in FILES]
    assert listing(tmp_path) == ["x", "x/y", "x/y/a.txt", "x/y/b.bin", "x/y/c.txt"]
    assert (out / "b.bin").read_bytes() == b"\x00second" and (out / "c.txt").read_text() == "third\n"


def test_write_all_failing_part_way_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up at the second rename: the first file renamed, the temporaries and the directories made
    by the call are all removed."""
    calls = fail_on_call(monkeypatch, 2)
    with pytest.raises(OSError) as info:
        write_all(tmp_path / "made" / "here", FILES)
    assert info.value.errno == errno.ENOSPC
    assert len(calls) == 2  # the first rename happened, so there was something to undo
    assert listing(tmp_path) == []


def test_write_all_failing_part_way_keeps_the_previous_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rewriting a set that exists: a failure leaves the old set as it was, not a mix (nor one file less)."""
    old = {"a.txt": "old a\n", "b.bin": b"old b", "c.txt": "old c\n"}
    write_all(tmp_path, old)
    fail_on_call(monkeypatch, 2)
    with pytest.raises(OSError):
        write_all(tmp_path, FILES)
    assert listing(tmp_path) == ["a.txt", "b.bin", "c.txt"]
    assert (tmp_path / "a.txt").read_text() == "old a\n" and (tmp_path / "b.bin").read_bytes() == b"old b"


def test_write_all_refuses_a_directory_among_the_targets_before_writing(tmp_path: Path) -> None:
    (tmp_path / "b.bin").mkdir()
    with pytest.raises(IsADirectoryError):
        write_all(tmp_path, FILES)
    assert listing(tmp_path) == ["b.bin"]


def test_write_all_refuses_a_fifo_among_the_targets_without_blocking(tmp_path: Path) -> None:
    fifo(tmp_path / "c.txt")
    with pytest.raises(OSError, match="FIFO"):
        bounded(lambda: write_all(tmp_path, FILES), QUICK)
    assert listing(tmp_path) == ["c.txt"]


def test_write_all_keeps_the_old_file_where_nothing_can_be_planted(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Where hard links fail (the copy fallback), the copy of the previous file is made in a private directory:
    a symlink planted meanwhile at a name in the output directory (the race an attacker can win there) is
    never written through, and a set that fails part way is still put back whole."""
    out, victim = tmp_path / "out", tmp_path / "victim.txt"
    victim.write_text("victim\n")
    old = {"a.txt": "old a\n", "b.bin": b"old b", "c.txt": "old c\n"}
    write_all(out, old)

    def link(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(dst).parent == out and not os.path.lexists(dst):
            Path(dst).symlink_to(victim)  # the attacker wins the race for the free name
        raise OSError(errno.EPERM, os.strerror(errno.EPERM), str(dst))  # no hard links here: copy instead

    monkeypatch.setattr(os, "link", link)
    with monkeypatch.context() as patch:
        fail_on_call(patch, 2)
        with pytest.raises(OSError):
            write_all(out, FILES)
    assert victim.read_text() == "victim\n"
    assert listing(out) == ["a.txt", "b.bin", "c.txt"]
    assert {name: (out / name).read_bytes() for name in old} == {
        name: value if isinstance(value, bytes) else value.encode() for name, value in old.items()}
    write_all(out, FILES)
    assert victim.read_text() == "victim\n"
    assert listing(out) == ["a.txt", "b.bin", "c.txt"] and (out / "c.txt").read_text() == "third\n"


@pytest.mark.parametrize("existing", [True, False], ids=["target-exists", "dangling"])
def test_write_all_refuses_two_names_of_one_file_before_writing(tmp_path: Path, existing: bool) -> None:
    """``b.bin`` a symlink to ``a.txt``: both would be renamed onto a.txt and one content lost."""
    if existing:
        (tmp_path / "a.txt").write_text("before\n")
    (tmp_path / "b.bin").symlink_to("a.txt")
    with pytest.raises(OSError, match="same file") as info:
        write_all(tmp_path, FILES)
    assert "a.txt" in str(info.value) and "b.bin" in str(info.value)
    assert (tmp_path / "b.bin").is_symlink() and os.readlink(tmp_path / "b.bin") == "a.txt"
    assert listing(tmp_path) == (["a.txt", "b.bin"] if existing else ["b.bin"])
    if existing:
        assert (tmp_path / "a.txt").read_text() == "before\n"


def test_codegen_refuses_a_header_linked_to_its_source(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "double_pendulum.c").write_text("before\n")
    (out / "double_pendulum.h").symlink_to("double_pendulum.c")
    line = refused(cli("codegen", "double_pendulum", "-l", "c", "-o", out), "same file", "no file written")
    assert "double_pendulum.c" in line and "double_pendulum.h" in line
    assert listing(out) == ["double_pendulum.c", "double_pendulum.h"]
    assert (out / "double_pendulum.c").read_text() == "before\n" and (out / "double_pendulum.h").is_symlink()


# -- simplify-model: the figures and the report, all or none ---------------------------------------------

SIMPLIFIED = ["dalembert_D.png", "dalembert_h.png", "simplified_model.txt"]


def simplify(output: Path) -> Result:
    return cli("simplify-model", "double_pendulum", *DOUBLE_CLI, "-o", output)


def test_simplify_model_on_a_full_disk_is_one_line_and_no_partial_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "new" / "simplified"
    with monkeypatch.context() as patch:
        calls = fail_on_call(patch, 2)
        refused(simplify(out), "No space left", "no file written")
    assert len(calls) == 2 and listing(tmp_path) == []  # the directories it made are gone too

    succeeded(simplify(out))
    assert listing(out) == SIMPLIFIED
    before = {name: (out / name).read_bytes() for name in SIMPLIFIED}
    with monkeypatch.context() as patch:
        fail_on_call(patch, 3)
        refused(simplify(out), "No space left", "no file written")
    assert listing(out) == SIMPLIFIED  # the previous set, whole
    assert {name: (out / name).read_bytes() for name in SIMPLIFIED} == before


def test_simplify_model_on_a_read_only_file_system_is_one_line(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """What a read-only mount does (and what root, for whom permissions do not count, can still test):
    creating the first temporary fails with EROFS."""
    real = tempfile.mkstemp

    def mkstemp(*args: Any, dir: Any = None, **kwargs: Any) -> tuple[int, str]:
        if dir is not None and Path(dir).is_relative_to(tmp_path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dir))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    refused(simplify(tmp_path / "out"), "Read-only file system", "no file written")
    assert listing(tmp_path) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions")
def test_simplify_model_into_a_read_only_directory_is_one_line(tmp_path: Path) -> None:
    parent = tmp_path / "read-only"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        refused(simplify(parent / "out"), "cannot write", "no file written")
        refused(simplify(parent), "cannot write", "no file written")
        assert listing(parent) == []
    finally:
        parent.chmod(0o755)


def test_simplify_model_refuses_a_file_as_its_output_directory(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("a file\n")
    refused(simplify(tmp_path / "out"), "--output", "not a directory")
    assert listing(tmp_path) == ["out"] and (tmp_path / "out").read_text() == "a file\n"


# == 4. Inputs ==========================================================================================

BAD_VALUES = {"nan": "must be a finite number", "inf": "must be a finite number", "1e999": "must be a finite number",
              "-inf": "must be a finite number", "abc": "must be a number"}


@pytest.mark.parametrize("command", ["torques", "simulate", "simplify-model", "linearize"])
@pytest.mark.parametrize("value", sorted(BAD_VALUES))
def test_cli_param_value_that_is_not_a_finite_number(command: str, value: str, tmp_path: Path) -> None:
    params = [*DOUBLE_CLI[:-1], f"m2={value}"]
    refused(cli(command, "double_pendulum", *params, *(["-o", tmp_path / "o"] if command == "simplify-model" else [])),
            "--param", "parameter m2", BAD_VALUES[value])
    assert listing(tmp_path) == []


@pytest.mark.parametrize("command", ["torques", "simulate"])
def test_cli_unknown_param_name_is_refused(command: str) -> None:
    refused(cli(command, "double_pendulum", *DOUBLE_CLI, "--param", "m3=1"), "--param", "no parameter 'm3'",
            "L1, L2, g, m1, m2")


@pytest.mark.parametrize("item", ["m2", "=1", "m2:1"])
def test_cli_param_without_name_and_value_is_refused(item: str) -> None:
    refused(cli("torques", "double_pendulum", "--param", item), "--param", "NAME=VALUE")


API_CALLS: dict[str, Callable[[dict[str, Any]], object]] = {
    "inverse_dynamics": lambda p: numeric.inverse_dynamics(rd.load("double_pendulum"), [0, 0], [0, 0], [0, 0],
                                                           params=p),
    "simulate": lambda p: rd.simulate(rd.load("double_pendulum"), 0.1, params=p),
    "simulate_numpy": lambda p: rd.simulate(rd.load("double_pendulum"), 0.1, params=p, engine="numpy"),
    "linearize": lambda p: rd.linearize(rd.load("double_pendulum"), [0, 0], params=p),
}


@pytest.mark.parametrize("call", sorted(API_CALLS))
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "nan", "1e999", "abc", None, [1.0]],
                         ids=repr)
def test_api_params_value_that_is_not_a_finite_number(call: str, value: object) -> None:
    error = one_line_model_error(lambda: API_CALLS[call]({**DOUBLE, "m2": value}), "parameter m2", "field 'params'")
    assert "finite number" in str(error) or "must be a number" in str(error)


@pytest.mark.parametrize("call", sorted(API_CALLS))
def test_api_params_unknown_name_is_refused(call: str) -> None:
    one_line_model_error(lambda: API_CALLS[call]({**DOUBLE, "m3": 1.0}), "no parameter 'm3'", "field 'params'")


def test_api_params_good_values_still_work() -> None:
    tau = numeric.inverse_dynamics(rd.load("double_pendulum"), [0, 0], [0, 0], [0, 0],
                                   params={**DOUBLE, "m2": "1.5", "g": 9.81})
    assert tau.shape == (2,)
    assert rd.simulate(rd.load("double_pendulum"), 0.1, params=DOUBLE, samples=3).t.shape == (3,)


# -- special files, oversized files ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["x.yaml", "x.json", "y.urdf", "x"])
def test_fifo_as_model_path_is_refused_without_blocking(name: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pipe = fifo(tmp_path / name)
    for given in (str(pipe), pipe, name):
        one_line_model_error(lambda given=given: rd.load(given), str(given), "is a FIFO, not a regular file",
                             seconds=QUICK)
    refused(cli("show", pipe), str(pipe), "is a FIFO, not a regular file")


@pytest.mark.parametrize("given", ["/dev/zero", Path("/dev/zero")], ids=["str", "Path"])
def test_dev_zero_as_model_path_is_refused_without_reading(given: str | Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    one_line_model_error(lambda: rd.load(given), "/dev/zero", "is a character device, not a regular file",
                         seconds=QUICK)


def test_directory_as_model_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").mkdir()
    one_line_model_error(lambda: rd.load(tmp_path / "m.yaml"), "is a directory, not a regular file")


def write_model(path: Path, data: object) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_model_file_over_the_size_bound_is_refused_before_reading(tmp_path: Path) -> None:
    """A file one byte over the bound is refused; a sparse file of 16 GiB is refused at once (reading it would
    take minutes and all the memory); a file of exactly the bound loads."""
    body = "name: a\nlinks:\n  - {joint: R, a: 1, mass: 1}\n"
    at_bound = tmp_path / "at.yaml"
    at_bound.write_text(body + "#" + "x" * (MAX_FILE_BYTES - len(body) - 2) + "\n")
    assert at_bound.stat().st_size == MAX_FILE_BYTES
    assert rd.load(at_bound).n == 1
    over = tmp_path / "over.yaml"
    over.write_text(at_bound.read_text() + "\n")
    one_line_model_error(lambda: rd.load(over), str(over), f"larger than {MAX_FILE_BYTES} bytes")
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as handle:
        handle.truncate(1 << 34)
    start = time.monotonic()
    one_line_model_error(lambda: rd.load(huge), str(huge), "larger than", seconds=QUICK)
    assert time.monotonic() - start < QUICK


# -- duplicate keys --------------------------------------------------------------------------------------

DUPLICATES = {
    "top.yaml": ("name: a\nlinks:\n  - {joint: R, a: 1, mass: 1}\nname: b\n", "duplicate key 'name'", "line 4"),
    "link.yaml": ("name: a\nlinks:\n  - joint: R\n    a: 1\n    mass: 1\n    a: 2\n", "duplicate key 'a'", "line 6"),
    "flow.yaml": ("name: a\nlinks:\n  - {joint: R, mass: 1, mass: 2}\n", "duplicate key 'mass'", "line 3"),
    "top.json": ('{"name": "a",\n "links": [{"joint": "R", "a": 1}],\n "name": "b"}\n', "duplicate key 'name'",
                 "line 3"),
    "link.json": ('{"name": "a",\n "links": [\n  {"joint": "R",\n   "a": 1,\n   "a": 2}]}\n', "duplicate key 'a'",
                  "line 5"),
}


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_duplicate_keys_are_one_error_naming_the_key_and_line(name: str, tmp_path: Path) -> None:
    text, key, line = DUPLICATES[name]
    path = tmp_path / name
    path.write_text(text)
    one_line_model_error(lambda: rd.load(path), str(path), key, line)
    refused(cli("show", path), str(path), key, line)


def test_same_key_in_different_mappings_is_not_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"name": "a", "links": [{"joint": "R", "a": 1}, {"joint": "R", "a": 2}]}))
    assert rd.load(path).n == 2


# -- a file named like a built-in robot -------------------------------------------------------------------


def test_built_in_name_loads_the_built_in_and_warns_about_the_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_model(tmp_path / "puma560", {"name": "impostor", "links": [ROW]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = rd.load("puma560")
    assert robot.name == "puma560" and robot.n == 6
    shadowing = [w for w in caught if "also a file here" in str(w.message)]
    assert len(shadowing) == 1 and shadowing[0].category is ModelWarning
    assert "'puma560' is a built-in robot" in str(shadowing[0].message) and "./puma560" in str(shadowing[0].message)
    for path in ("./puma560", Path("puma560"), tmp_path / "puma560"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ModelWarning)  # no shadowing warning when a path is given
            robot = rd.load(path)
        assert robot.name == "impostor" and robot.n == 1


def test_built_in_name_without_such_a_file_does_not_warn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        assert rd.load("double_pendulum").name == "double_pendulum"


# -- the link cap ----------------------------------------------------------------------------------------


def test_link_cap_is_200() -> None:
    assert MAX_LINKS == 200


def test_model_file_with_one_link_too_many_is_refused(tmp_path: Path) -> None:
    def rows(n: int) -> list[dict[str, Any]]:
        return [{"joint": "R", "a": 0.1} for _ in range(n)]  # distinct dicts: no YAML aliases

    ok = write_model(tmp_path / "ok.yaml", {"name": "long", "links": rows(MAX_LINKS)})
    assert rd.load(ok).n == MAX_LINKS
    over = write_model(tmp_path / "over.yaml", {"name": "long", "links": rows(MAX_LINKS + 1)})
    one_line_model_error(lambda: rd.load(over), str(over), "field 'links'", f"{MAX_LINKS + 1} links",
                         f"at most {MAX_LINKS}", seconds=QUICK)


def test_manipulator_and_from_dh_with_one_link_too_many_are_refused() -> None:
    one_line_model_error(lambda: Manipulator(links=[Link(joint="R", a=0.1) for _ in range(MAX_LINKS + 1)]),
                         "field 'links'", f"at most {MAX_LINKS}")
    one_line_model_error(lambda: Manipulator.from_dh([{"joint": "R", "a": 0.1}] * (MAX_LINKS + 1)),
                         f"at most {MAX_LINKS}")


def chain_urdf(joints: int) -> str:
    inertial = ('<inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="1"/>'
                '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')
    parts = ['<?xml version="1.0"?>', '<robot name="long_chain">', '<link name="l0"/>']
    for k in range(1, joints + 1):
        parts.append(f'<link name="l{k}">{inertial}</link>')
        parts.append(f'<joint name="j{k}" type="revolute"><parent link="l{k - 1}"/><child link="l{k}"/>'
                     f'<origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 1"/>'
                     f'<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def test_urdf_chain_with_one_joint_too_many_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "chain.urdf"
    path.write_text(chain_urdf(MAX_LINKS + 1))
    one_line_model_error(lambda: rd.load(path), str(path), f"{MAX_LINKS + 1} moving joints",
                         f"at most {MAX_LINKS}", seconds=QUICK)


# -- unusable paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["x" * 5000, "x" * 5000 + ".yaml", "d/" * 2500 + "m.json", "a\0b", "a\0b.yaml",
                                   "a\0b.urdf", "puma560\0"],
                         ids=["long", "long.yaml", "deep.json", "nul", "nul.yaml", "nul.urdf", "builtin-nul"])
def test_unusable_path_is_a_model_error(given: str) -> None:
    error = one_line_model_error(lambda: rd.load(given))
    assert len(str(error)) < 400, "the message names the path, cut short"
    if "\0" in given:
        assert "null byte" in str(error) and "\\0" in str(error)
    else:
        assert "too long" in str(error) or "no such file" in str(error)


# -- vectors without an order ----------------------------------------------------------------------------

COMS = {"set": "!!set {1, 2, 3}", "mapping": "{x: 0, y: 0, z: 0}", "text": "'0 0 0'", "two": "[0, 0]",
        "scalar": "0.5"}


@pytest.mark.parametrize("kind", sorted(COMS))
def test_com_that_is_not_a_list_of_three_is_refused(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(f"name: a\nlinks:\n  - {{joint: R, a: 1, mass: 1, com: {COMS[kind]}}}\n")
    one_line_model_error(lambda: rd.load(path), str(path), "link 1", "field 'com'")
    refused(cli("show", path), "link 1", "field 'com'")


@pytest.mark.parametrize("com", [{1, 2, 3}, {"x": 0, "y": 0, "z": 0}, "0 0 0"], ids=["set", "mapping", "text"])
def test_api_com_that_is_not_a_sequence_is_refused(com: object) -> None:
    one_line_model_error(lambda: Link(joint="R", a=1, mass=1, com=com), "field 'com'")


# -- sample counts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["torques", "simulate", "check"])
def test_cli_huge_sample_count_is_refused_at_once(command: str) -> None:
    params = [] if command == "check" else DOUBLE_CLI
    start = time.monotonic()
    refused(cli(command, "double_pendulum", *params, "--samples", "1000000000"), "samples", str(MAX_SAMPLES),
            "1000000000")
    assert time.monotonic() - start < QUICK


def test_api_huge_sample_count_is_refused_at_once() -> None:
    robot = rd.load("double_pendulum")
    start = time.monotonic()
    with pytest.raises(SimulationError, match=f"field 'samples'.*{MAX_SAMPLES}"):
        bounded(lambda: rd.simulate(robot, 1.0, params=DOUBLE, samples=10**9), QUICK)
    with pytest.raises(ModelError, match=str(MAX_SAMPLES)):
        bounded(lambda: run_check(robot, samples=10**9), QUICK)
    with pytest.raises(ModelError, match=str(MAX_SAMPLES)):
        bounded(lambda: load_trajectory("angeles1", robot, samples=10**9), QUICK)
    assert time.monotonic() - start < QUICK


# -- trajectory files ------------------------------------------------------------------------------------


def test_fifo_as_trajectory_csv_is_refused_without_blocking(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "motion.csv")
    refused(cli("torques", "double_pendulum", *DOUBLE_CLI, "-t", pipe), str(pipe), "is a FIFO, not a regular file")
    refused(cli("simplify-model", "double_pendulum", *DOUBLE_CLI, "-t", pipe, "-o", tmp_path / "out"), str(pipe),
            "is a FIFO")
    with pytest.raises(ModelError, match="FIFO"):
        bounded(lambda: load_trajectory(pipe, rd.load("double_pendulum")), QUICK)
    assert listing(tmp_path) == ["motion.csv"]


# -- operating points given as text ----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "__import__('os').system('touch {marker}')",
    "open('{marker}', 'w')",
    "(lambda: 1)()",
    "q1.__class__",
    "[x for x in ()]",
])
def test_symbolic_operating_point_text_is_parsed_never_run(text: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "PWNED"
    robot = rd.load("double_pendulum")
    hostile = text.format(marker=marker)
    one_line_model_error(lambda: linearize_symbolic(robot, [hostile, 0], [0, 0], [0, 0]), "field 'q0'")
    one_line_model_error(lambda: rd.linearize(robot, [0, 0], [0, hostile], symbolic=True), "field 'qd0'")
    assert not marker.exists() and listing(tmp_path) == []


def test_symbolic_operating_point_text_with_constants_works() -> None:
    robot = rd.load("double_pendulum")
    from_text = linearize_symbolic(robot, ["pi/2", "0"], [0, 0], [0, 0])
    exact = linearize_symbolic(robot, [sympy.pi / 2, 0], [0, 0], [0, 0])
    assert list(from_text.q0) == [sympy.pi / 2, 0]
    assert from_text.A == exact.A and from_text.B == exact.B



# -- output and trajectory paths that cannot be looked up ------------------------------------------------

LONG = "a" * 300  # longer than a file name may be (NAME_MAX 255): stat raises ENAMETOOLONG, not ENOENT
UNUSABLE_OUTPUTS = {
    "codegen": ["codegen", "double_pendulum", "-o", "{path}"],
    "derive": ["derive", "double_pendulum", "-o", "{path}/eq.txt"],
    "report": ["report", "double_pendulum", "-o", "{path}"],
    "demo": ["demo", "double_pendulum", "-o", "{path}"],
    "simplify-model": ["simplify-model", "double_pendulum", *DOUBLE_CLI, "-o", "{path}"],
    "simulate-plot": ["simulate", "double_pendulum", *DOUBLE_CLI, "--plot", "{path}.png"],
    "torques-csv": ["torques", "double_pendulum", *DOUBLE_CLI, "--csv", "{path}/t.csv"],
    "torques-trajectory": ["torques", "double_pendulum", *DOUBLE_CLI, "--trajectory", "{path}"],
    "simplify-trajectory": ["simplify-model", "double_pendulum", *DOUBLE_CLI, "-t", "{path}.csv", "-o", "s"],
}


@pytest.mark.parametrize("kind", ["too-long", "link-loop"])
@pytest.mark.parametrize("command", sorted(UNUSABLE_OUTPUTS))
def test_cli_path_that_cannot_be_looked_up_is_one_line(command: str, kind: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A path too long for the system or through a loop of symlinks: Path.exists raises OSError in Python
    3.11; every command says so in one line, exit 2, and writes nothing."""
    monkeypatch.chdir(tmp_path)
    if kind == "link-loop":
        Path("loop").symlink_to("loop")
    path = LONG if kind == "too-long" else "loop/x"
    line = refused(cli(*(arg.format(path=path) for arg in UNUSABLE_OUTPUTS[command])))
    assert ("File name too long" if kind == "too-long" else "Too many levels of symbolic links") in line
    assert path[:100] in line and len(line) < 400, "the path is named, cut short"
    assert listing(tmp_path) == (["loop"] if kind == "link-loop" else [])


@pytest.mark.parametrize("given", [LONG, LONG + ".csv", "a\0b.csv"], ids=["long", "long.csv", "nul"])
def test_api_trajectory_path_that_cannot_be_looked_up_is_a_model_error(given: str) -> None:
    error = one_line_model_error(lambda: load_trajectory(given, rd.load("double_pendulum")),
                                 given[:100].replace("\0", "\\0"), "cannot look up the path")
    assert len(str(error)) < SHOWN_PATH_CHARS + 100


def test_path_exists_tells_missing_from_unusable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "loop").symlink_to("loop")
    assert path_exists(tmp_path / "file") and path_exists(str(tmp_path))
    assert not path_exists(tmp_path / "missing") and not path_exists(tmp_path / "file" / "below")
    assert not path_exists(tmp_path / "missing" / "below")
    one_line_model_error(lambda: path_exists(tmp_path / "loop" / "x", "shown name"), "shown name",
                         "Too many levels of symbolic links")
    error = one_line_model_error(lambda: path_exists(LONG * 20), "cannot look up the path", "...")
    assert len(str(error)) < SHOWN_PATH_CHARS + 100
    one_line_model_error(lambda: path_exists("a\0b"), "a\\0b", "null byte")


@pytest.mark.parametrize("filename", ["/some/where", None], ids=["with-file", "without-file"])
def test_cli_os_error_nothing_checked_is_one_line(filename: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last resort: an OSError that no check turned into a message is one line, ``error: FILE: reason``,
    exit 2 (never a traceback)."""
    def load(*_: object, **__: object) -> None:  # _load(model, strict, lock, ..., actuated=...)
        raise OSError(errno.EACCES, os.strerror(errno.EACCES), filename)

    monkeypatch.setattr(cli_module, "_load", load)
    line = refused(cli("show", "double_pendulum"))
    assert line == (f"error: {filename}: Permission denied" if filename else "error: Permission denied")


# -- names in plot titles are text, not math -------------------------------------------------------------

MATH_NAME = "a$\\foo{$"  # mathtext would parse $\foo{$ and raise ValueError (unknown symbol) when drawing


def csv_trajectory(path: Path) -> Path:
    path.write_text("t,q1,q2\n" + "".join(f"{0.1 * k},{0.02 * k},{-0.03 * k}\n" for k in range(11)))
    return path


def test_trajectory_name_with_dollars_is_drawn_as_text_in_the_plots(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV trajectory's file name (its stem is the trajectory's name) goes into figure titles as it is."""
    monkeypatch.chdir(tmp_path)
    motion = csv_trajectory(tmp_path / f"{MATH_NAME}.csv")
    succeeded(cli("torques", "double_pendulum", *DOUBLE_CLI, "-t", motion, "--plot", "p.png",
                  "--joint-plot", "q.png"))
    succeeded(cli("simplify-model", "double_pendulum", *DOUBLE_CLI, "-t", motion, "-o", "s"))
    assert listing(tmp_path) == sorted([motion.name, "p.png", "q.png", "s", *(f"s/{n}" for n in SIMPLIFIED)])
    history = torque_history(rd.load("double_pendulum"), motion, DOUBLE)
    assert history.trajectory.name == MATH_NAME
    title = history.figure()._suptitle
    assert title.get_text().startswith("double_pendulum: ") and MATH_NAME in title.get_text()
