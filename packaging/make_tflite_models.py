"""Make the small int8 TFLite test models of tests/data/tflite/ (a developer tool).

Run with a Python that has TensorFlow and ai-edge-litert (not a dependency of Hexscope or CI):
``TFVENV/bin/python packaging/make_tflite_models.py [NAME ...]``, or ``... --mobilenet-v2
OUT.tflite`` for the benchmark's model. Each model is a few KB; beside MODEL.tflite it writes
MODEL.input.npy (the model's input codes, its input dtype) and MODEL.output.npy (TFLite's CPU
output for that input, run with ai-edge-litert).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "tflite"


def _models():  # type: ignore[no-untyped-def]
    import tensorflow as tf

    layers = tf.keras.layers
    # random biases, so that the bias constants the delegate rewrites are not all zero
    conv2d = functools.partial(layers.Conv2D, bias_initializer="random_normal")
    depthwise = functools.partial(layers.DepthwiseConv2D, bias_initializer="random_normal")

    def seq(shape, *body):  # type: ignore[no-untyped-def]
        x = inp = tf.keras.Input(shape, batch_size=1)
        for layer in body:
            x = layer(x)
        return tf.keras.Model(inp, x)

    def two_branch(shape, merge):  # type: ignore[no-untyped-def]
        inp = tf.keras.Input(shape, batch_size=1)
        a = conv2d(4, 1, activation="relu")(inp)
        b = conv2d(4, 3, padding="same")(inp)
        return tf.keras.Model(inp, merge([a, b]))

    return {
        "conv_relu6": lambda: seq((8, 8, 3), conv2d(8, 3, strides=2, padding="same"),
                                  layers.ReLU(6.0)),
        "conv_valid_relu": lambda: seq((9, 9, 4), conv2d(6, 3, activation="relu")),
        "depthwise": lambda: seq((8, 8, 8), depthwise(3, padding="same")),
        "depthwise_dilated": lambda: seq((10, 10, 8),
                                         depthwise(3, padding="same",
                                                                dilation_rate=2)),
        "depthwise_5x5_s2": lambda: seq((12, 12, 64),
                                        depthwise(5, strides=2, padding="same")),
        "fully_connected": lambda: seq((16,), layers.Dense(10, activation="relu",
                                                            bias_initializer="random_normal")),
        "add": lambda: two_branch((6, 6, 3), layers.Add()),
        "mul": lambda: two_branch((6, 6, 3), layers.Multiply()),
        "concat": lambda: two_branch((6, 6, 3), layers.Concatenate()),
        "pools": lambda: seq((8, 8, 4), layers.MaxPooling2D(2),
                             layers.AveragePooling2D(2, strides=1, padding="same")),
        "reshape_softmax": lambda: seq((4, 4, 2), layers.Reshape((32,)), layers.Softmax()),
        "resize_pad_mean": lambda: seq((4, 4, 3), layers.UpSampling2D(2, interpolation="bilinear"),
                                       layers.ZeroPadding2D(1),
                                       layers.GlobalAveragePooling2D(keepdims=True)),
        # TF1's resizes without half-pixel centres: versions the delegate takes
        "resize": lambda: seq(
            (4, 4, 3), layers.Lambda(lambda x: tf.compat.v1.image.resize_bilinear(x, (8, 8))),
            layers.Lambda(lambda x: tf.compat.v1.image.resize_nearest_neighbor(x, (12, 12)))),
        "hard_swish": lambda: seq((6, 6, 4), conv2d(4, 1), layers.Activation("hard_swish")),
        "min_max": lambda: two_branch((6, 6, 3), layers.Maximum()),
        "layout": lambda: _layout_model(tf),
        "transpose_conv": lambda: seq((4, 4, 4), layers.Conv2DTranspose(
            6, 3, strides=2, padding="same", use_bias=False)),
        "pad_slice_pack": lambda: seq(
            (4, 4, 4), layers.Lambda(lambda x: tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]],
                                                      mode="REFLECT")),
            layers.Lambda(lambda x: tf.slice(x, [0, 1, 0, 0], [1, 4, 5, 4])),
            layers.Lambda(lambda x: tf.math.l2_normalize(x, axis=-1)),
            layers.Lambda(lambda x: tf.stack([x[:, :, :, 0], x[:, :, :, 2]], axis=-1))),
        "argmax": lambda: seq((4, 4, 6), conv2d(6, 1),
                              layers.Lambda(lambda x: tf.argmax(x, axis=-1,
                                                                output_type=tf.int32))),
        # bad inputs for the importer's errors: a tensor of five dimensions, a float model
        "bad_rank5": lambda: seq((4, 4, 4), layers.Reshape((2, 2, 2, 2, 4)),
                                 lambda x: layers.Concatenate()([x, x]),
                                 layers.Reshape((4, 4, 8)), layers.ReLU()),
        "bad_float": lambda: seq((4, 4, 2), conv2d(2, 1)),
    }


def _layout_model(tf):  # type: ignore[no-untyped-def]
    """SPLIT, SPACE_TO_DEPTH, DEPTH_TO_SPACE, TRANSPOSE and CONCATENATION (NEG has no int8
    kernel in TFLite: the converter leaves it in float)."""
    layers = tf.keras.layers
    inp = tf.keras.Input((4, 4, 8), batch_size=1)
    a, b = layers.Lambda(lambda x: tf.split(x, 2, axis=3))(inp)
    a = layers.Lambda(lambda x: tf.nn.depth_to_space(tf.nn.space_to_depth(x, 2), 2))(a)
    b = layers.Lambda(lambda x: tf.transpose(x, [0, 2, 1, 3]))(b)
    return tf.keras.Model(inp, layers.Concatenate()([a, b]))


def _uint8_relu_pools_concat() -> bytes:
    """A uint8 model made with TensorFlow's legacy converter (every range the default, so the
    delegate adds no Requantize): RELU, two MAX_POOL_2D, CONCATENATION, whose hexagon_nn ops
    Hexscope runs today. RELU comes first: after a pool the converter fuses it (a fused
    activation on a pool, which the delegate refuses)."""
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1, 8, 8, 4], name="input")
        r = tf.nn.relu(x)
        a = tf.nn.max_pool2d(r, 2, 2, "VALID")
        b = tf.nn.max_pool2d(r, 3, 2, "SAME")
        out = tf.concat([a, b], axis=3, name="out")
        with tf.compat.v1.Session() as session:
            conv = tf.compat.v1.lite.TFLiteConverter.from_session(session, [x], [out])
            conv.inference_type = tf.uint8
            conv.quantized_input_stats = {"input": (128.0, 127.0)}
            conv.default_ranges_stats = (-1.0, 1.0)
            return conv.convert()


def _convert(model, rng, float_model: bool = False):  # type: ignore[no-untyped-def]
    import tensorflow as tf

    shape = [1, *model.input_shape[1:]]

    def data():  # type: ignore[no-untyped-def]
        for _ in range(32):
            yield [rng.uniform(-1, 1, shape).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if float_model:
        return conv.convert()
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = data
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    return conv.convert()


def _seed_tensorflow(seed: int) -> None:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)


def _calibrate_batch_norms(tf, model, batch) -> None:  # type: ignore[no-untyped-def]
    """Set every BatchNormalization's moving mean and variance to the statistics of ``batch``.

    Why: with random weights and Keras's default statistics (mean 0, variance 1), each
    BatchNorm passes its convolution's output through almost unscaled, so activations shrink
    or grow layer after layer (block_4's expand layer ends in [0, 0.000159]) and the int8 model
    has ranges no trained network has: the delegate's graph then meets requantize gains that
    nnlib rightly refuses. A trained network's BatchNorms hold the statistics of its data, so
    every layer's output has about unit scale. One training-mode pass with momentum 0 gives
    exactly that (each BatchNorm normalises with, and stores, its batch's statistics, layer
    after layer as the inference model will see them); the weights are not trained."""
    norms = [layer for layer in model.layers
             if isinstance(layer, tf.keras.layers.BatchNormalization)]
    for layer in norms:
        layer.momentum = 0.0
    model(batch, training=True)
    for layer in norms:
        layer.momentum = 0.99


def mobilenet_v2(path: str) -> None:
    """MobileNetV2 (224x224, random seeded weights: the work, not the accuracy) as an int8
    model for bench/tflite_bench.py; 4 MB, so it is made on demand and not committed.

    Its BatchNorms are calibrated on the representative data (``_calibrate_batch_norms``), so
    that its ranges look like a trained model's and the delegate's graph runs end to end."""
    import tensorflow as tf

    _seed_tensorflow(0)
    model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    rng = np.random.default_rng(0)
    batch = rng.uniform(-1, 1, (16, 224, 224, 3)).astype(np.float32)
    _calibrate_batch_norms(tf, model, batch)
    Path(path).write_bytes(_convert(model, rng))
    print(f"{path}: {Path(path).stat().st_size} bytes")


def main(names: list[str]) -> None:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    OUT.mkdir(parents=True, exist_ok=True)
    models = _models()
    models["u8_relu_pools_concat"] = None
    for name in names or sorted(models):
        rng = np.random.default_rng(sum(map(ord, name)))
        _seed_tensorflow(sum(map(ord, name)))     # the same weights on every run
        if models[name] is None:
            blob = _uint8_relu_pools_concat()
        else:
            blob = _convert(models[name](), rng, name == "bad_float")
        (OUT / f"{name}.tflite").write_bytes(blob)
        # TFLite's builtin kernels, as hexscope compare --reference tflite runs them
        interp = Interpreter(
            model_content=blob, num_threads=1,
            experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        interp.allocate_tensors()
        info = interp.get_input_details()[0]
        if info["dtype"] == np.float32:
            codes = rng.uniform(-1, 1, info["shape"]).astype(np.float32)
        else:
            bounds = np.iinfo(info["dtype"])
            codes = rng.integers(bounds.min, bounds.max + 1, info["shape"]).astype(info["dtype"])
        interp.set_tensor(info["index"], codes)
        interp.invoke()
        out = interp.get_tensor(interp.get_output_details()[0]["index"])
        np.save(OUT / f"{name}.input.npy", codes)
        np.save(OUT / f"{name}.output.npy", out)
        print(f"{name}: {len(blob)} bytes, output {out.dtype}{list(out.shape)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mobilenet-v2"]:
        mobilenet_v2(sys.argv[2])
    else:
        main(sys.argv[1:])
