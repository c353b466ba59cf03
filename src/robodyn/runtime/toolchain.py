"""The C toolchain of :func:`robodyn.compile`: which compiler, with which flags, run how.

The C of :mod:`robodyn.codegen.c` is compiled with ``cc -O3 -fPIC -shared -std=c99 -fno-math-errno
-ffp-contract=off`` (``-O1`` for C of more than :data:`LARGE_C_BYTES`; ``$CC`` if set, with the options it carries,
else ``cc``, else ``gcc``), plus ``-march=native`` on Linux on x86-64 and AArch64 (with ``-mprefer-vector-width=512`` on
x86-64: AVX-512 where the host has it; both dropped again if the compiler refuses them), into a shared library in
the compile cache (:mod:`robodyn.runtime.cache`; the compiler command and, with ``-march=native``, the host's
processor, :func:`host_fingerprint`, are part of its key). ``-O3`` vectorises the batch loops of the generated C
across states; ``-fno-math-errno`` and ``-ffp-contract=off`` change no result (no fused multiply-adds: the same
numbers with or without ``-march=native``), and nothing like ``-ffast-math`` is used.

Without a C compiler (or with ``$CC`` naming one that is not found: ``$CC``, when set, is the only compiler tried),
or when the compiler fails, :class:`CompileError` says so and names the fallback: the generated NumPy module,
``rd.compile(robot, backend="numpy")``, which gives the same object without compiling.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = ["CompileError", "find_compiler", "host_fingerprint", "native_flags"]

C_FLAGS = ("-O3", "-fPIC", "-shared", "-std=c99", "-fno-math-errno", "-ffp-contract=off")
NATIVE = "-march=native"
#: On x86-64, vectorise with the widest registers (AVX-512 where the host has them, where GCC and Clang
#: stop at 256 bits by default): the long straight-line batch loops are bound by the instructions they
#: issue, and 8 states per instruction instead of 4 take 15-30% off every routine (measured on the PUMA's and
#: the Panda's; hosts without AVX-512 are unaffected).
WIDE = "-mprefer-vector-width=512"
#: Generated C of more than this many bytes is compiled at ``-O1`` instead of ``-O3`` (:func:`sized_command`): GCC's
#: time at ``-O3`` grows with the C's size, some 30 s of CPU a MB, while ``-O1`` takes a quarter of it. Measured on
#: Talos' default routines (1.1 MB of C, gcc 12, 2 busy cores): -O3 36 s of CPU and 368 MB, -O2 21 s, -O1 9.4 s
#: and 267 MB; per state on 4,096 states, tau 0.40 / 1.03 / 1.24 us, M 1.9 / 2.3 / 2.6 us, forward dynamics 1.1 /
#: 6.4 / 5.6 us (-O2 and -O1 leave the batch loops unvectorised). So -O3 is kept up to the size of some 60 s of
#: compiling, and -O1 taken above it (a humanoid's derivatives), where -O3 would take minutes and gigabytes.
LARGE_C_BYTES = 2 * 1024 * 1024
FALLBACK = ("use the generated NumPy module instead: robodyn.compile(robot, backend='numpy'), "
            "or `robodyn codegen MODEL --lang numpy`")


class CompileError(RuntimeError):
    """No C compiler, or the compiler failed."""


def find_compiler() -> list[str] | None:
    """The C compiler command: ``$CC`` if set (split like a shell command line: it may carry options),
    else ``cc``, else ``gcc``; None if neither is found. A ``$CC`` that names a program not found is a
    :class:`CompileError` (naming ``$CC`` and the NumPy fallback), never a silent switch to another
    compiler without the options it carries."""
    given = os.environ.get("CC", "")
    if given.strip():
        try:
            command = shlex.split(given)
        except ValueError as exc:
            raise CompileError(f"$CC={given!r} is not a command line ({exc}); {FALLBACK}") from None
        path = shutil.which(command[0])
        if path is None:
            raise CompileError(f"$CC={given!r}: {command[0]!r} is not found; set $CC to an installed C "
                               f"compiler, or unset it to use cc or gcc; or {FALLBACK}")
        return [path, *command[1:]]
    for name in ("cc", "gcc"):
        path = shutil.which(name)
        if path:
            return [path]
    return None


def native_flags() -> list[str]:
    """``-march=native`` where it is worth it and understood (Linux, x86-64 or AArch64), with :data:`WIDE` on
    x86-64; else []."""
    if platform.system() != "Linux":
        return []
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return [NATIVE, WIDE]
    return [NATIVE] if machine in ("aarch64", "arm64") else []


def host_fingerprint() -> str:
    """The processor this process runs on: machine, model and feature flags (from /proc/cpuinfo where
    there is one), hashed: what ``-march=native`` code depends on."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    fields = ("model name", "flags", "Features", "CPU implementer", "CPU architecture", "CPU variant", "CPU part")
    lines = sorted({line.strip() for line in text.splitlines() if line.split(":", 1)[0].strip() in fields})
    data = "\n".join([platform.system(), platform.machine(), platform.processor(), *lines])
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CompileError(f"cannot run {command[0]} ({exc.strerror}); {FALLBACK}") from None


def sized_command(command: list[str], source_bytes: int) -> list[str]:
    """``command`` for a C file of ``source_bytes`` bytes: its ``-O3`` as ``-O1`` above :data:`LARGE_C_BYTES`
    (a deterministic choice from the C, which the cache key fixes: the key names the command asked for)."""
    if source_bytes <= LARGE_C_BYTES:
        return command
    return ["-O1" if flag == "-O3" else flag for flag in command]


def compile_library(command: list[str], source: Path, library: Path) -> None:
    """Compile the C ``source`` into the shared ``library`` with ``command`` (the compiler and its flags); a
    compiler that refuses ``-march=native`` (or :data:`WIDE`) compiles without both. CompileError (its
    command, exit status and the end of its messages) if it fails."""
    run = [*command, "-o", str(library), str(source), "-lm"]
    result = _run(run)
    if result.returncode != 0 and NATIVE in run:  # a compiler that does not know -march=native (or WIDE)
        plain = [*(a for a in run if a not in (NATIVE, WIDE))]
        if _run(plain).returncode == 0:
            result, run = subprocess.CompletedProcess(plain, 0), plain
    if result.returncode != 0:
        tail = " ".join(result.stderr.split())[-800:]
        raise CompileError(f"{shlex.join(run)} failed (exit {result.returncode}): {tail}; {FALLBACK}")
