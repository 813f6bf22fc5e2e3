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

``--selfie MODEL OUT_DIR`` makes, in OUT_DIR (not committed: docs/tflite.md says why), the
same from MediaPipe's selfie segmentation (``mediapipe/modules/selfie_segmentation/
selfie_segmentation.tflite``, Apache-2.0): its RELUs also fused into the depthwise convs,
per-tensor depthwise weights, cut at its 64x64 decoder output, the pictures in [0, 1].
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


def float32_weights(path: Path, fuse_into: tuple[str, ...] = ("CONV_2D", "ADD"),
                    cut: str = ""):  # type: ignore[no-untyped-def]
    """The model with each float16 weight made float32 in place of its DEQUANTIZE, each RELU
    fused into the operator of ``fuse_into`` before it, and, with ``cut``, ending at the
    tensor of that name (the operators after the one that writes it dropped)."""
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
    graph.operators = _fuse_relus(model, graph, kept, codes, fuse_into)
    if cut:
        index = next(i for i, t in enumerate(graph.tensors) if _name(t) == cut)
        last = next(k for k, o in enumerate(graph.operators) if index in o.outputs)
        graph.operators = graph.operators[:last + 1]
        graph.outputs = [index]
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


def _name(tensor) -> str:  # type: ignore[no-untyped-def]
    name = tensor.name
    return name.decode() if isinstance(name, bytes) else str(name)


def _fuse_relus(model, graph, ops, codes, fuse_into):  # type: ignore[no-untyped-def]
    """Each RELU folded into the operator of ``fuse_into`` before it (their only reader), as
    TensorFlow's converter fuses activations before it quantizes.

    Why: the delegate's RELU is nnlib's QuantizedRelu_8, whose output keeps its input's range
    (``activation_builder.cc`` adds no requantize), while the next operator's builder reads
    it with the RELU tensor's own range; the quantizer gives that tensor its own calibrated
    range, so a standalone RELU is read on the wrong grid (docs/tflite.md)."""
    from ai_edge_litert import schema_py_generated as schema

    into = {getattr(schema.BuiltinOperator, name) for name in fuse_into}
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
                and codes[src.opcodeIndex] in into
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
                 "MAX_POOL_2D": 2, "CONCATENATION": 2, "RESHAPE": 1, "QUANTIZE": 1,
                 "HARD_SWISH": 1, "LOGISTIC": 2, "AVERAGE_POOL_2D": 2, "MUL": 2,
                 # 3 with half_pixel_centers (int8_versions), which the delegate refuses
                 "RESIZE_BILINEAR": 2}


def int8_versions(content: bytes) -> bytes:
    """The quantized model with its operator versions as the converter gives int8 ones."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(content))
    used = {o.opcodeIndex for g in model.subgraphs for o in g.operators}
    half_pixel = {o.opcodeIndex for g in model.subgraphs for o in g.operators
                  if getattr(o.builtinOptions, "halfPixelCenters", False)}
    for k, c in enumerate(model.operatorCodes):
        name = names[max(c.builtinCode, c.deprecatedBuiltinCode)]
        if k not in used:
            continue    # DEQUANTIZE, whose operators step 1 removed
        if name not in INT8_VERSIONS:
            raise SystemExit(f"no int8 version known for {name}: add it from op_version.cc")
        c.version = INT8_VERSIONS[name] + (1 if name == "RESIZE_BILINEAR" and k in half_pixel
                                           else 0)
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


# MediaPipe's selfie segmentation (--selfie; docs/tflite.md, *A better-conditioned second
# real model*): cut at its 64x64 decoder output, before the 128x128 resize the delegate refuses
# (and the custom Convolution2DTransposeBias TFLite's stock resolver lacks)
SELFIE_CUT = "add_10__xeno_compat__1"


def _selfie_recipe():  # type: ignore[no-untyped-def]
    """The static recipe with per-tensor depthwise weights: per-channel, the delegate splits
    a 5x5 stride-2 depthwise conv into a QuantizedConcat_8 nnlib refuses (docs/tflite.md)."""
    import copy

    from ai_edge_quantizer import recipe

    rules = recipe.static_wi8_ai8()
    depthwise = copy.deepcopy(rules[0])
    depthwise["operation"] = "DEPTHWISE_CONV_2D"
    depthwise["op_config"]["weight_tensor_config"]["granularity"] = "TENSORWISE"
    return [*rules, depthwise]


def make(model: bytes, out: Path, name: str, pictures: list[np.ndarray], rules,  # type: ignore[no-untyped-def]
         picture: np.ndarray) -> None:
    """Quantize ``model`` calibrated on ``pictures`` and write NAME.tflite, NAME.input.npy
    (``picture`` as the model's input codes) and NAME.output.npy (TFLite's builtin kernels'
    first output) in ``out``."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    from ai_edge_quantizer import quantizer

    key = Interpreter(model_content=model).get_signature_list()["serving_default"]["inputs"][0]
    q = quantizer.Quantizer(model, rules)
    calibration = q.calibrate({"serving_default": [{key: p} for p in pictures]})
    result = q.quantize(calibration)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.tflite"
    path.write_bytes(int8_versions(bytes(result.quantized_model)))
    # TFLite's builtin kernels, not XNNPACK's (as Hexscope's reference runs it)
    it = Interpreter(model_path=str(path), num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = picture
    if inp["dtype"] != np.float32:
        scale, zero = inp["quantization"]
        info = np.iinfo(inp["dtype"])
        x = np.clip(np.round(x / scale) + zero, info.min, info.max).astype(inp["dtype"])
    np.save(out / f"{name}.input.npy", x)
    it.set_tensor(inp["index"], x)
    it.invoke()
    outs = it.get_output_details()
    np.save(out / f"{name}.output.npy", it.get_tensor(outs[0]["index"]))
    print(f"{path}: {path.stat().st_size} bytes; input {inp['dtype'].__name__}"
          f"{list(inp['shape'])}, outputs {[(o['name'], list(o['shape'])) for o in outs]}")


def main(argv: list[str]) -> int:
    from ai_edge_quantizer import recipe

    if len(argv) == 3 and argv[0] == "--selfie":
        # its input is RGB in [0, 1]: the same drawn pictures, rescaled
        model = bytes(float32_weights(Path(argv[1]), ("CONV_2D", "DEPTHWISE_CONV_2D", "ADD"),
                                      SELFIE_CUT))
        rng = np.random.default_rng(27)
        pictures = [((face_picture(rng, 256) + 1) / 2)[None] for _ in range(32)]
        picture = ((face_picture(np.random.default_rng(2027), 256) + 1) / 2)[None]
        make(model, Path(argv[2]), "selfie", pictures, _selfie_recipe(), picture)
        return 0
    if len(argv) != 1:
        print(__doc__)
        return 2
    model = bytes(float32_weights(Path(argv[0])))
    rng = np.random.default_rng(27)
    pictures = [face_picture(rng)[None] for _ in range(32)]
    make(model, OUT, NAME, pictures, recipe.static_wi8_ai8(),
         face_picture(np.random.default_rng(2027))[None])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
