"""A native kgate candidate (a compiled `kgate_run` library, host or CUDA) as a torch
module, so the Python worker can put it beside a problem's PyTorch form: its checks
against the form's float64 truth, and its interleaved timing against eager, torch.compile
and max-autotune (a native problem's reference columns, docs/reports.md).

The library went through kgate's own gates as source; here it is loaded by kgate, never
named by candidate code (the lint keeps ctypes away from candidates).
"""

import ctypes

import torch

MAX_DIMS = 8  # KGATE_MAX_DIMS, harness/include/kgate/kernel.h

# kgate_dtype, harness/include/kgate/kernel.h
DTYPES = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2, torch.float64: 3,
          torch.int32: 4, torch.int64: 5}


class KgateTensor(ctypes.Structure):
    """kgate_tensor: data, dtype, ndim, shape[8], strides[8] (in elements)."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


def describe(t: torch.Tensor) -> KgateTensor:
    if t.dtype not in DTYPES:
        raise TypeError(f"a native kernel takes no {t.dtype} tensors")
    if t.dim() > MAX_DIMS:
        raise ValueError(f"a native kernel takes at most {MAX_DIMS} dimensions, not {t.dim()}")
    d = KgateTensor()
    d.data = t.data_ptr()
    d.dtype = DTYPES[t.dtype]
    d.ndim = t.dim()
    for i, (n, s) in enumerate(zip(t.shape, t.stride())):
        d.shape[i] = n
        d.strides[i] = s
    return d


class NativeModel(torch.nn.Module):
    """Calls `kgate_run` of the library at `path` on its inputs, on torch's current CUDA
    stream (NULL on the host). Its outputs are allocated as the problem's reference returns
    them for the same inputs (shape and dtype), learned once per input signature by calling
    `reference`; a reference returning a tuple gets a tuple."""

    def __init__(self, path: str, reference):
        super().__init__()
        self.path = path
        self._lib = ctypes.CDLL(path)
        try:
            fn = self._lib.kgate_run
        except AttributeError:
            raise RuntimeError(f"{path}: exports no kgate_run") from None
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.POINTER(KgateTensor), ctypes.c_int32, ctypes.POINTER(KgateTensor),
                       ctypes.c_int32, ctypes.c_void_p]
        self._run = fn
        self._reference = [reference]  # a list: not a submodule (no weights to copy)
        self._layouts: dict = {}

    def _outputs_like(self, inputs: list):
        key = tuple((tuple(x.shape), x.dtype, x.device) if isinstance(x, torch.Tensor) else repr(x)
                    for x in inputs)
        if key not in self._layouts:
            with torch.no_grad():
                want = self._reference[0](*inputs)
            many = isinstance(want, (tuple, list))
            self._layouts[key] = (many, [(tuple(w.shape), w.dtype) for w in (want if many else [want])])
        return self._layouts[key]

    def forward(self, *inputs):
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        if not tensors:
            raise ValueError("a native kernel needs tensor inputs")
        device = tensors[0].device
        many, layout = self._outputs_like(list(inputs))
        outs = [torch.empty(shape, dtype=dt, device=device) for shape, dt in layout]
        held = [x if x.is_contiguous() else x.contiguous() for x in tensors]  # alive over the call
        ins = [describe(x) for x in held]
        outd = [describe(o) for o in outs]
        stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else None
        rc = self._run((KgateTensor * len(ins))(*ins), len(ins), (KgateTensor * len(outd))(*outd),
                       len(outd), stream)
        if rc != 0:
            raise RuntimeError(f"kgate_run of {self.path} returned {rc}")
        return tuple(outs) if many else outs[0]
