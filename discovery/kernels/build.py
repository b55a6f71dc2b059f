"""Compiling the query loops ahead of time (``tooldisc kernels build``; numba and a C compiler at build time only).

``numba.pycc`` compiles the ``*_loop`` functions of :mod:`.loops` themselves (no second copy
of any loop), at every argument type :data:`.aot.SIGNATURES` lists, into the extension
module :mod:`.aot` finds and loads. Apart from that module so that the dispatch
(:mod:`tooldisc.discovery.kernels`), which loads it, and this, which compiles the loops, import no circle.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tooldisc.discovery.kernels.aot import (
    SIGNATURES,
    digest,
    directory,
    key_parts,
    module_name,
    module_path,
    signature_count,
    signatures,
    symbol,
    target_cpu,
)


def build(where: Path | None = None, progress: Callable[[str], None] | None = None,
          force: bool = False) -> tuple[Path, bool]:
    """Compile the module into ``where`` (default :func:`directory`); (its path, whether it was compiled).

    Nothing is compiled when the matching module is already there (unless ``force``). The file is
    written to a temporary directory beside its place and renamed into it: a process loading it
    meanwhile sees the whole file or none. Needs numba (the ``fast`` extra) and a C compiler.
    """
    import importlib.util
    import shutil
    import tempfile

    from tooldisc.errors import MissingExtraError, ToolDiscError

    if importlib.util.find_spec("numba") is None:
        raise MissingExtraError("compiling the query loops", "fast", "numba")
    parts = key_parts()
    if parts is None:
        raise ToolDiscError("the source of the query loops is not readable", file=str(Path(__file__).with_name("loops.py")))
    hexkey = digest(parts)
    target_dir = where or directory()
    path = module_path(hexkey, target_dir)
    if path.is_file() and not force:
        return path, False
    from numba.core import types as nbtypes
    from numba.pycc import CC

    from tooldisc.discovery.kernels import loops

    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=target_dir))
    except OSError as exc:
        raise ToolDiscError(f"cannot write the compiled query loops: {exc}", file=str(target_dir)) from exc
    try:
        cc = CC(module_name(hexkey), source_module=loops)
        cc.output_dir = str(tmp)
        cc.target_cpu = target_cpu(parts["cpu"].decode())  # the key carries the CPU (aot.host_cpu)
        for loop in SIGNATURES:
            for types in signatures(loop):  # argument types only: numba infers each return type
                cc.export(symbol(loop, types), tuple(_numba_type(t, nbtypes) for t in types))(getattr(loops, loop))
        if progress:
            progress(f"compiling {signature_count()} loop signatures into {path.name}")
        try:
            cc.compile()
        except Exception as exc:  # numba's typing, the C compiler or the linker: one line, --debug for the rest
            raise ToolDiscError(f"compiling the query loops failed ({type(exc).__name__}): {exc}") from exc
        os.replace(tmp / path.name, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path, True


def _numba_type(name: str, nbtypes: Any) -> Any:
    """The numba type of one declared argument type (a C-contiguous 1-D array, or a scalar)."""
    if name == "int":
        return nbtypes.int64
    if name == "float":
        return nbtypes.float64
    scalar = nbtypes.boolean if name == "bool" else getattr(nbtypes, name)
    return nbtypes.Array(scalar, 1, "C")
