"""Hostile input files (issue 33): each is refused with an InputError naming the file before
anything large is allocated or anything blocks: a zip named .npy, a header declaring a huge
shape, text, a pickle, a truncated file, an empty array, a FIFO, a symlink loop, a folder and
a decompression bomb."""

from __future__ import annotations

import os
import pickle
import tracemalloc

import numpy as np
import pytest
from PIL import Image

from hexscope.engine.errors import InputError
from hexscope.engine.inputs import InputSource, make_input

SHAPE = (1, 16, 16, 3)


def _npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (117 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()


def _npy(path, declared=SHAPE):
    return make_input(InputSource(kind="npy", path=str(path)), declared)


def test_a_zip_named_npy_is_refused_as_an_archive(tmp_path):
    path = tmp_path / "x.npy"
    with open(path, "wb") as handle:
        np.savez(handle, a=np.zeros(3))
    with pytest.raises(InputError, match="x.npy: is a zip archive"):
        _npy(path)


def test_a_header_declaring_a_huge_shape_is_refused_before_allocating(tmp_path):
    path = tmp_path / "x.npy"
    path.write_bytes(_npy_header((100000, 100000)))
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"x.npy: declares shape \[100000, 100000\] "
                                             r"\(37.3 GiB\), more than"):
            _npy(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2 ** 20


def test_a_header_larger_than_the_file_is_a_truncated_file(tmp_path):
    path = tmp_path / "x.npy"
    path.write_bytes(_npy_header((1, 16, 16, 3)) + b"\0" * 100)
    with pytest.raises(InputError, match=r"declares shape \[1, 16, 16, 3\] \(3.0 KiB\) but "
                                         r"holds 100 bytes of data: the file is truncated"):
        _npy(path)


@pytest.mark.parametrize(("content", "words"), [
    (b"hello world\n", "is not a .npy file"),
    (pickle.dumps([1, 2, 3]), "is not a .npy file"),
    (b"", "is not a .npy file")])
def test_text_and_pickles_are_not_npy_files(tmp_path, content, words):
    path = tmp_path / "x.npy"
    path.write_bytes(content)
    with pytest.raises(InputError, match=words) as info:
        _npy(path)
    assert "allow_pickle" not in str(info.value)


def test_an_object_array_is_refused_without_unpickling(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="holds Python objects") as info:
        _npy(path)
    assert "allow_pickle" not in str(info.value)


def test_an_empty_array_is_no_input(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((1, 0, 16, 3), np.float32))
    with pytest.raises(InputError, match=r"holds no elements \(shape \[1, 0, 16, 3\]\)"):
        _npy(path)


def test_a_good_npy_still_loads(tmp_path):
    path = tmp_path / "x.npy"
    data = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    np.save(path, data)
    assert np.array_equal(_npy(path).array, data)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    path = tmp_path / "x.npy"
    os.mkfifo(path)
    with pytest.raises(InputError, match="named pipe"):
        _npy(path)


def test_a_symlink_loop_and_a_folder_are_named(tmp_path):
    (tmp_path / "a.npy").symlink_to(tmp_path / "b.npy")
    (tmp_path / "b.npy").symlink_to(tmp_path / "a.npy")
    with pytest.raises(InputError, match="a.npy: a symbolic link loop"):
        _npy(tmp_path / "a.npy")
    (tmp_path / "d.npy").mkdir()
    with pytest.raises(InputError, match="d.npy: is a folder"):
        _npy(tmp_path / "d.npy")


def test_a_decompression_bomb_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)   # a 64x64 image is then a bomb
    path = tmp_path / "x.png"
    Image.new("RGB", (64, 64)).save(path)
    with pytest.raises(InputError, match="x.png: the image has too many pixels"):
        make_input(InputSource(kind="image", path=str(path)), SHAPE)
    path.write_bytes(b"not an image")
    with pytest.raises(InputError, match="x.png: cannot read as an image"):
        make_input(InputSource(kind="image", path=str(path)), SHAPE)
