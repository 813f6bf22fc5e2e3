"""Make tests/data/tflite/blazeface.tflite, a real model quantized to int8 (a developer tool).

The model is MediaPipe's short-range face detector (BlazeFace, 128x128 RGB in, 896 anchors'
boxes and scores out) as the ``mediapipe`` wheel ships it
(``mediapipe/modules/face_detection/face_detection_short_range.tflite``, Apache-2.0, the
wheel's LICENSE). That file is a float model whose weights are stored as float16 behind
DEQUANTIZE operators; the delegate takes int8 models only, so this script:

1. turns each float16 weight into float32 in place of its DEQUANTIZE (the same values),
   folds each RELU into the CONV_2D or ADD before it (as TensorFlow's converter does; why in
   ``_fuse_relus``), writes the operator codes in the field newer readers read
   (``builtin_code``), and gives the model a signature (``serving_default``), which the
   quantizer calibrates by;
2. quantizes it with ``ai-edge-quantizer``'s static recipe (int8 weights per channel, int8
   activations, ``static_wi8_ai8``), calibrated on synthetic pictures (below);
3. sets the operator versions to those TensorFlow's converter gives int8 operators
   (``INT8_VERSIONS``: the quantizer keeps the float model's v1);
4. writes blazeface.tflite, blazeface.input.npy (one picture as the model's int8 input
   codes) and blazeface.output.npy (TFLite's CPU output for it, run with ai-edge-litert).

No dataset can be downloaded here, so the pictures are drawn: a face-like figure (a skin-toned
ellipse with darker eyes, brows and mouth on a smooth background), at a few sizes, places and
lightings, plus noise. Only the activation ranges come from them; the weights are MediaPipe's.

Run by hand, never in CI, with a Python that has ai-edge-quantizer and ai-edge-litert:
``pip download mediapipe==0.10.14 --no-deps -d /tmp/mp``, unzip the model from the wheel
(``unzip /tmp/mp/mediapipe-*.whl 'mediapipe/modules/face_detection/*' -d /tmp/mp``), then
``TFVENV/bin/python packaging/make_real_tflite_model.py
/tmp/mp/mediapipe/modules/face_detection/face_detection_short_range.tflite``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "tflite"
NAME = "blazeface"
SIZE = 128


def face_picture(rng: np.random.Generator, size: int = SIZE) -> np.ndarray:
    """A face-like RGB picture in [-1, 1] (the model's input range), HWC float32."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    angle = rng.uniform(0, 2 * np.pi)
    bg = 0.5 + 0.35 * np.cos(angle) * (xx - 0.5) + 0.35 * np.sin(angle) * (yy - 0.5)
    img = np.stack([bg * c for c in rng.uniform(0.5, 1.0, 3)], axis=-1)
    cx, cy = rng.uniform(0.35, 0.65, 2)
    r = rng.uniform(0.18, 0.32)
    skin = np.array([0.85, 0.65, 0.5]) * rng.uniform(0.6, 1.1)
    face = ((xx - cx) / (0.8 * r)) ** 2 + ((yy - cy) / r) ** 2 <= 1
    img[face] = skin
    def blob(x0: float, y0: float, rx: float, ry: float, colour: np.ndarray) -> None:
        img[((xx - x0) / rx) ** 2 + ((yy - y0) / ry) ** 2 <= 1] = colour
    dark = skin * 0.25
    for side in (-1, 1):
        blob(cx + side * 0.35 * r, cy - 0.2 * r, 0.12 * r, 0.07 * r, dark)           # eye
        blob(cx + side * 0.35 * r, cy - 0.42 * r, 0.18 * r, 0.03 * r, dark)          # brow
    blob(cx, cy + 0.12 * r, 0.06 * r, 0.12 * r, skin * 0.8)                          # nose
    blob(cx, cy + 0.5 * r, 0.3 * r, 0.07 * r, np.array([0.6, 0.25, 0.25]))           # mouth
    img = img + rng.normal(0, 0.02, img.shape)
    return (np.clip(img, 0, 1) * 2 - 1).astype(np.float32)


def float32_weights(path: Path):  # type: ignore[no-untyped-def]
    """The model with each float16 weight made float32 in place of its DEQUANTIZE."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(path))
    # an older file: the operator codes are in deprecatedBuiltinCode and builtinCode is 0
    # (ADD), which the quantizer reads as ADD everywhere
    for c in model.operatorCodes:
        c.builtinCode = max(c.builtinCode, c.deprecatedBuiltinCode)
    codes = [c.builtinCode for c in model.operatorCodes]
    (graph,) = model.subgraphs
    kept = []
    for o in graph.operators:
        src = graph.tensors[o.inputs[0]]
        if (codes[o.opcodeIndex] == schema.BuiltinOperator.DEQUANTIZE
                and src.type == schema.TensorType.FLOAT16 and model.buffers[src.buffer].data
                is not None):
            raw = np.frombuffer(bytes(model.buffers[src.buffer].data), np.float16)
            dst = graph.tensors[o.outputs[0]]
            buf = schema.BufferT()
            buf.data = raw.astype(np.float32).tobytes()
            model.buffers.append(buf)
            dst.buffer = len(model.buffers) - 1
            continue
        kept.append(o)
    graph.operators = _fuse_relus(model, graph, kept, codes)
    _drop_unused_tensors(model, graph)
    sig = schema.SignatureDefT()
    sig.signatureKey = "serving_default"
    sig.subgraphIndex = 0
    def tmap(i: int):  # type: ignore[no-untyped-def]
        t = schema.TensorMapT()
        t.name = graph.tensors[i].name
        t.tensorIndex = i
        return t
    sig.inputs = [tmap(i) for i in graph.inputs]
    sig.outputs = [tmap(i) for i in graph.outputs]
    model.signatureDefs = [sig]
    return flatbuffer_utils.convert_object_to_bytearray(model)


def _fuse_relus(model, graph, ops, codes):  # type: ignore[no-untyped-def]
    """Each RELU folded into the CONV_2D or ADD before it (their only reader), as TensorFlow's
    converter fuses activations before it quantizes.

    Why: the delegate's RELU is nnlib's QuantizedRelu_8, whose output keeps its input's range
    (``activation_builder.cc`` adds no requantize), while the next operator's builder reads
    it with the RELU tensor's own range; the quantizer gives that tensor its own calibrated
    range, so a standalone RELU is read on the wrong grid (docs/tflite.md)."""
    from ai_edge_litert import schema_py_generated as schema

    producer = {o.outputs[0]: o for o in ops}
    readers: dict[int, int] = {}
    for o in ops:
        for i in o.inputs:
            readers[i] = readers.get(i, 0) + 1
    kept = []
    for o in ops:
        src = producer.get(o.inputs[0])
        if (codes[o.opcodeIndex] == schema.BuiltinOperator.RELU and src is not None
                and readers[o.inputs[0]] == 1
                and codes[src.opcodeIndex] in (schema.BuiltinOperator.CONV_2D,
                                               schema.BuiltinOperator.ADD)
                and src.builtinOptions.fusedActivationFunction == 0):
            src.builtinOptions.fusedActivationFunction = schema.ActivationFunctionType.RELU
            src.outputs = list(o.outputs)
            continue
        kept.append(o)
    return kept


def _drop_unused_tensors(model, graph) -> None:  # type: ignore[no-untyped-def]
    """Removes the float16 tensors no operator reads any more, and empties their buffers (the
    quantizer would carry them into the int8 model)."""
    used = sorted({i for o in graph.operators for i in [*o.inputs, *o.outputs] if i >= 0}
                  | set(graph.inputs) | set(graph.outputs))
    new = {old: k for k, old in enumerate(used)}
    for i, t in enumerate(graph.tensors):
        if i not in new and t.buffer:
            model.buffers[t.buffer].data = None
    graph.tensors = [graph.tensors[i] for i in used]
    for o in graph.operators:
        o.inputs = [new[i] if i >= 0 else i for i in o.inputs]
        o.outputs = [new[i] for i in o.outputs]
    graph.inputs = [new[i] for i in graph.inputs]
    graph.outputs = [new[i] for i in graph.outputs]


# The versions TensorFlow's converter gives these operators on int8 tensors
# (tensorflow/lite/tools/versioning/op_version.cc, GetBuiltinOperatorVersion): the quantizer
# keeps the float model's v1, which the delegate refuses for RELU (utils.cc: RELU is v2 only)
# and which no converter writes for int8 tensors.
INT8_VERSIONS = {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "ADD": 2, "RELU": 2, "PAD": 2,
                 "MAX_POOL_2D": 2, "CONCATENATION": 2, "RESHAPE": 1, "QUANTIZE": 1}


def int8_versions(content: bytes) -> bytes:
    """The quantized model with its operator versions as the converter gives int8 ones."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(content))
    used = {o.opcodeIndex for g in model.subgraphs for o in g.operators}
    for k, c in enumerate(model.operatorCodes):
        name = names[max(c.builtinCode, c.deprecatedBuiltinCode)]
        if k not in used:
            continue    # DEQUANTIZE, whose operators step 1 removed
        if name not in INT8_VERSIONS:
            raise SystemExit(f"no int8 version known for {name}: add it from op_version.cc")
        c.version = INT8_VERSIONS[name]
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def main(argv: list[str]) -> int:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    from ai_edge_quantizer import quantizer, recipe

    if len(argv) != 1:
        print(__doc__)
        return 2
    model = bytes(float32_weights(Path(argv[0])))
    rng = np.random.default_rng(27)
    name = Interpreter(model_content=model).get_signature_list()["serving_default"]["inputs"][0]
    pictures = [face_picture(rng)[None] for _ in range(32)]
    q = quantizer.Quantizer(model, recipe.static_wi8_ai8())
    calibration = q.calibrate({"serving_default": [{name: p} for p in pictures]})
    result = q.quantize(calibration)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{NAME}.tflite"
    path.write_bytes(int8_versions(bytes(result.quantized_model)))
    # TFLite's builtin kernels, not XNNPACK's (as Hexscope's reference runs it)
    it = Interpreter(model_path=str(path), num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = face_picture(np.random.default_rng(2027))[None]
    if inp["dtype"] != np.float32:
        scale, zero = inp["quantization"]
        info = np.iinfo(inp["dtype"])
        x = np.clip(np.round(x / scale) + zero, info.min, info.max).astype(inp["dtype"])
    np.save(OUT / f"{NAME}.input.npy", x)
    it.set_tensor(inp["index"], x)
    it.invoke()
    outs = it.get_output_details()
    np.save(OUT / f"{NAME}.output.npy", it.get_tensor(outs[0]["index"]))
    print(f"{path}: {path.stat().st_size} bytes; input {inp['dtype'].__name__}"
          f"{list(inp['shape'])}, outputs {[(o['name'], list(o['shape'])) for o in outs]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
