"""Where a graph's inputs come from: per INPUT output an ``.npy`` file, an image, a constant
or a seeded random tensor. The choice is saved with the graph (``graph.meta["inputs"]``)."""

from __future__ import annotations

import errno
import os
import stat
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npformat

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, narrow_64bit
from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.nodes import OutputDef
from hexscope.engine.tensor import Tensor, as_shape

KINDS = ("random", "constant", "npy", "image")


@dataclass(frozen=True, slots=True)
class InputSource:
    """One graph input. ``shape`` None means the INPUT node's declared output shape."""

    kind: str = "random"
    path: str = ""
    value: float = 0.0
    seed: int = 0
    dtype: str = "float32"
    shape: tuple[int, int, int, int] | None = None
    low: float = -1.0
    high: float = 1.0
    # an "npy" file holding a d32 tensor's memory, padding bytes included, in memory order
    # [B, H_tot, D_tot/32, W_tot, 32], with these paddings (a reduction's cut d32 tensor)
    d32_padding: tuple[int, int, int, int, int, int] | None = None

    def describe(self) -> str:
        if self.kind == "random":
            return f"random {self.dtype} in [{self.low}, {self.high}] seed {self.seed}"
        if self.kind == "constant":
            return f"constant {self.value} ({self.dtype})"
        if self.kind == "npy" and self.d32_padding is not None:
            return f"npy {self.path} (d32 memory, padding {list(self.d32_padding)})"
        return f"{self.kind} {self.path}"


def input_node(graph: Graph) -> int | None:
    return next((n.node_id for n in graph if n.op == "INPUT"), None)


def declared_shapes(graph: Graph) -> list[tuple[int, int, int, int] | None]:
    """The declared shape of each INPUT output (None where no size was declared)."""
    node_id = input_node(graph)
    if node_id is None:
        return []
    return [o.shape if o.max_sizes else None for o in graph.node(node_id).outputs]


def input_sources(graph: Graph) -> list[InputSource]:
    """The saved sources, or a seeded random tensor per INPUT output.

    Raises InputError naming the input and the field when the saved settings are malformed
    (a graph file edited by hand, or damaged)."""
    saved = graph.meta.get("inputs", [])
    if not isinstance(saved, list):
        raise InputError("the saved input settings are not a list with one entry per INPUT "
                         f"output (found {type(saved).__name__})")
    sources = []
    node_id = input_node(graph)
    outputs = graph.node(node_id).outputs if node_id is not None else ()
    for k, _ in enumerate(declared_shapes(graph)):
        entry = saved[k] if k < len(saved) and isinstance(saved[k], dict) else {}
        fields = {f: entry[f] for f in InputSource.__dataclass_fields__ if f in entry}
        sources.append(_checked_source(k, fields) if fields else _default(k, outputs[k]))
    return sources


def _default(k: int, out: OutputDef) -> InputSource:
    """A seeded random tensor of the type the INPUT output declares: one-byte elements are
    quint8 codes (what a quantized graph's first op reads), anything else float32 in
    [-1, 1]."""
    if out.elementsize == 1:
        return InputSource(seed=k, dtype="uint8", low=0.0, high=255.0)
    return InputSource(seed=k)


def _checked_source(k: int, fields: dict[str, Any]) -> InputSource:
    """An InputSource from saved fields, each checked for its type and range."""
    def bad(name: str, why: str) -> InputError:
        return InputError(f"input {k}: the saved '{name}' {fields[name]!r} {why}")

    if "kind" in fields and fields["kind"] not in KINDS:
        raise bad("kind", f"is not one of {', '.join(KINDS)}")
    if "dtype" in fields:
        try:
            DType.from_numpy(np.dtype(fields["dtype"]))
        except (TypeError, ValueError):
            raise bad("dtype", "is not a hexagon_nn element type (float32, uint8, int32, "
                      "...)") from None
    for name in ("value", "low", "high"):
        if name in fields and not _is_number(fields[name]):
            raise bad(name, "is not a number")
    if "seed" in fields and not (type(fields["seed"]) is int and fields["seed"] >= 0):
        raise bad("seed", "is not a non-negative integer")
    if "path" in fields and not isinstance(fields["path"], str):
        raise bad("path", "is not a file name")
    if fields.get("d32_padding") is not None:
        pads = fields["d32_padding"]
        if not (isinstance(pads, list | tuple) and len(pads) == 6
                and all(type(v) is int and v >= 0 for v in pads)):
            raise bad("d32_padding", "is not 6 non-negative sizes (height, width and depth "
                      "padding, before and after)")
        fields["d32_padding"] = tuple(pads)
    if fields.get("shape") is not None:
        shape = fields["shape"]
        if not (isinstance(shape, list | tuple) and all(type(d) is int for d in shape)):
            raise bad("shape", "is not a list of up to 4 sizes")
        try:
            fields["shape"] = as_shape(shape)
        except ValueError as exc:
            raise bad("shape", f"is not a tensor shape: {exc}") from None
    return InputSource(**fields)


def _is_number(value: object) -> bool:
    return type(value) in (int, float) and np.isfinite(value)


def set_input_sources(graph: Graph, sources: list[InputSource]) -> None:
    # d32_padding only where set: files written before it existed stay byte-identical
    graph.meta["inputs"] = [{k: (list(v) if isinstance(v, tuple) else v)
                             for k, v in asdict(s).items()
                             if not (k == "d32_padding" and v is None)} for s in sources]


def make_inputs(graph: Graph, base_dir: str | Path | None = None,
                sources: list[InputSource] | None = None) -> list[Tensor]:
    """Materialise the inputs; relative paths are resolved against ``base_dir``."""
    shapes = declared_shapes(graph)
    tensors = [make_input(src, shapes[k] if k < len(shapes) else None, base_dir)
               for k, src in enumerate(sources if sources is not None else input_sources(graph))]
    if "tflite" in graph.meta:
        # a TFLite model's input: its codes, or float32 quantized as TFLite would
        from hexscope.engine.io.tflite.inputs import model_inputs

        tensors = model_inputs(graph, tensors)
    return tensors


def make_input(src: InputSource, declared: tuple[int, int, int, int] | None,
               base_dir: str | Path | None = None) -> Tensor:
    shape = src.shape or declared
    try:
        dtype = np.dtype(src.dtype)
    except TypeError:
        raise InputError(f"input ({src.describe()}): unknown element type "
                         f"{src.dtype!r}") from None
    if src.kind in ("random", "constant", "image") and shape is None:
        raise InputError(f"input ({src.describe()}): the INPUT node declares no shape; "
                         "declare its output shape (in the app: select the INPUT node, "
                         "Inspector ▸ Shape) or give the input a shape (Debug ▸ Inputs…)")
    if shape is not None and src.kind in ("random", "constant", "image"):
        if min(shape) < 0:
            raise InputError(f"input ({src.describe()}): shape {list(shape)} has a negative "
                             "size")
        if int(np.prod(shape, dtype=object)) * dtype.itemsize > _MAX_INPUT_BYTES:
            raise InputError(f"input ({src.describe()}): shape {list(shape)} needs more than "
                             "4 GiB, more than a hexagon_nn tensor can hold (its data size "
                             "is 32-bit)")
    if src.kind == "random" and (type(src.seed) is not int or src.seed < 0):
        raise InputError(f"input ({src.describe()}): the seed must be a non-negative integer")
    if src.kind == "random":
        rng = np.random.default_rng(src.seed)
        if dtype.kind == "f":
            data = rng.uniform(src.low, src.high, shape).astype(dtype)
        else:
            data = rng.integers(int(src.low), int(src.high), shape, endpoint=True).astype(dtype)
        return Tensor.from_array(data)
    if src.kind == "constant":
        return Tensor.from_array(np.full(shape, src.value, dtype))
    path = Path(src.path)
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    if src.kind == "npy":
        tensor = (_load_d32_npy(path, D32Padding(*src.d32_padding), declared)
                  if src.d32_padding is not None else _load_npy(path, declared))
        if tensor.array.size == 0:
            raise InputError(f"{path}: holds no elements (shape {list(tensor.array.shape)}); "
                             "an input needs data")
        return tensor
    if src.kind == "image":
        return _load_image(path, shape, dtype)  # type: ignore[arg-type]
    raise InputError(f"unknown input kind {src.kind!r}; choose one of {', '.join(KINDS)}")


#: hexagon_nn's tensor data size is a uint32.
_MAX_INPUT_BYTES = 2 ** 32 - 1


def open_regular(path: Path) -> BinaryIO:
    """Open ``path`` for reading only if it is a regular file: a FIFO would block for ever, a
    device or a folder is no input, and a symlink loop gets its own words. The file is opened
    non-blocking first and checked on the descriptor, so nothing can swap it in between.

    Raises InputError naming the file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{path}: a symbolic link loop (the link points back to "
                             "itself)") from None
        raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a folder"
                if stat.S_ISDIR(mode) else "a device or socket")
        raise InputError(f"{path}: is {what}, not a regular file; inputs are read from "
                         "files only")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def npy_header(handle: BinaryIO, path: Path) -> tuple[tuple[int, ...], np.dtype, bool]:
    """The shape, dtype and Fortran order an ``.npy`` file declares, checked before anything
    is allocated: a zip archive (an ``.npz`` under another name), text, a pickle, or a shape
    larger than the file (or than a hexagon_nn tensor) is refused here, naming the file."""
    magic = handle.read(6)
    handle.seek(0)
    if magic.startswith(b"PK\x03\x04") or magic.startswith(b"PK\x05\x06"):
        raise InputError(f"{path}: is a zip archive (an .npz?), not a .npy file; save one "
                         "array with numpy.save")
    if magic != b"\x93NUMPY":
        raise InputError(f"{path}: is not a .npy file (no NumPy header); save the array with "
                         "numpy.save")
    try:
        version = npformat.read_magic(handle)
        read = (npformat.read_array_header_1_0 if version == (1, 0)
                else npformat.read_array_header_2_0)
        shape, fortran, dtype = read(handle)
    # A damaged header reaches numpy's literal parser: SyntaxError or tokenize's TokenError.
    except (OSError, ValueError, EOFError, SyntaxError, tokenize.TokenError) as exc:
        raise InputError(f"{path}: the .npy header is damaged: {exc}") from None
    if dtype.hasobject:
        raise InputError(f"{path}: holds Python objects (pickled data), which are never "
                         "loaded; save a numeric array")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if nbytes > _MAX_INPUT_BYTES:
        raise InputError(f"{path}: declares shape {list(shape)} ({_size(nbytes)}), more than "
                         "a hexagon_nn tensor can hold (4 GiB)")
    available = os.fstat(handle.fileno()).st_size - handle.tell()
    if nbytes > available:
        raise InputError(f"{path}: declares shape {list(shape)} ({_size(nbytes)}) but holds "
                         f"{_size(max(available, 0))} of data: the file is truncated")
    return shape, dtype, fortran


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} bytes"


def _load_npy(path: Path, declared: tuple[int, int, int, int] | None = None) -> Tensor:
    with open_regular(path) as handle:
        shape, _, _ = npy_header(handle, path)
        if declared is not None and len(shape) > 4:
            raise InputError(f"{path}: holds a {len(shape)}-D array {list(shape)}; the INPUT "
                             f"declares {list(declared)} (a tensor has at most 4 dimensions)")
        handle.seek(0)
        try:
            arr = npformat.read_array(handle, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise InputError(f"{path}: cannot read as .npy: {exc}") from None
    try:
        return Tensor.from_array(narrow_64bit(arr))
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None


def _load_d32_npy(path: Path, padding: D32Padding,
                  declared: tuple[int, int, int, int] | None) -> Tensor:
    """A d32 tensor from its memory, padding bytes included ([B, H_tot, D_tot/32, W_tot,
    32]): a consumer that reads padding reads what the file holds. A file of up to 4
    dimensions (another file chosen since) is read as a flat tensor."""
    with open_regular(path) as handle:
        shape, _, _ = npy_header(handle, path)
        if len(shape) <= 4:
            return _load_npy(path, declared)
        if len(shape) != 5 or shape[4] != 32:
            raise InputError(f"{path}: holds shape {list(shape)}; a d32 input (its source has "
                             "d32_padding) is saved as its memory [B, H_tot, D_tot/32, "
                             "W_tot, 32]")
        handle.seek(0)
        try:
            memory = npformat.read_array(handle, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise InputError(f"{path}: cannot read as .npy: {exc}") from None
    b, h_total, slices, w_total, _ = shape
    p = padding
    logical = (b, h_total - p.h_before - p.h_after, w_total - p.w_before - p.w_after,
               slices * 32 - p.d_before - p.d_after)
    try:
        if min(logical) <= 0:
            raise ValueError(f"padding {list(p)} leaves no data in memory {list(shape)}")
        return Tensor.from_memory(memory, logical, DType.from_numpy(memory.dtype), p)
    except ValueError as exc:
        raise InputError(f"{path}: not a d32 tensor: {exc}") from None


def _load_image(path: Path, shape: tuple[int, int, int, int], dtype: np.dtype) -> Tensor:
    """An RGB (or grey, for depth 1) image resized to (height, width); floats scale to 0..1."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow is a dependency
        raise InputError("reading images needs Pillow") from None
    try:
        with open_regular(path) as handle, Image.open(handle) as img:
            img = img.convert("L" if shape[3] == 1 else "RGB").resize((shape[2], shape[1]))
            data = np.asarray(img)
    except Image.DecompressionBombError:
        raise InputError(f"{path}: the image has too many pixels to decode safely (Pillow "
                         "refuses it as a possible decompression bomb); scale it down "
                         "first") from None
    except (OSError, ValueError, EOFError, SyntaxError) as exc:
        raise InputError(f"{path}: cannot read as an image: {exc}") from None
    data = data.reshape(shape[1], shape[2], -1)[..., : shape[3]]
    if data.shape[2] != shape[3]:
        raise InputError(f"{path}: an image has 1 or 3 channels, the input wants {shape[3]}")
    out = data.astype(np.float32) / 255.0 if dtype.kind == "f" else data
    return Tensor.from_array(np.broadcast_to(out, shape).astype(dtype))
