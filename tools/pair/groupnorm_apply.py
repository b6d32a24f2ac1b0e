#!/usr/bin/env python3
"""A `command` agent for the first GPU run of a pair experiment (docs/dispatch.md, pair
experiments): on a problem whose apply kernel normalises contiguous groups -- a pointwise
prologue `t = swish(x + bias) + add`, then a group norm over G contiguous elements with an
affine -- it folds the statistics kernel (the apply kernel's pair partner) into the apply
kernel: one pass over the data instead of two. The statistics kernel's file becomes a
launcher that does nothing.

Written for the official level2/37_Matmul_Swish_Sum_GroupNorm (torch.compile's two kernels
after the GEMM); it reads C, G and eps from Inductor's apply kernel, and refuses
(`kgate-description` says why, no file changed) on anything else. Run by kgate with the
workspace as its working directory and $KGATE_CANDIDATE set.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys

FUSED = '''# kgate:kernel {name}
# kgate:template pair-groupnorm-apply: the statistics of each {g}-element group computed
#   here, in registers ({partner} does nothing): one read and one write of the data
KGATE_TEMPLATE = "pair-groupnorm-apply"
GBLOCK = {gblock}
NUM_WARPS = 4

import triton
import triton.language as tl


@triton.jit
def _kgate_groupnorm_apply(io_ptr, bias_ptr, add_ptr, w_ptr, b_ptr, groups, eps,
                           C: tl.constexpr, G: tl.constexpr, GBLOCK: tl.constexpr):
    grp = tl.program_id(0) * GBLOCK + tl.arange(0, GBLOCK)[:, None]
    lane = tl.arange(0, G)[None, :]
    mask = grp < groups
    offs = grp.to(tl.int64) * G + lane
    col = offs % C
    x = tl.load(io_ptr + offs, mask=mask, other=0.0)
    t = x + tl.load(bias_ptr + col, mask=mask, other=0.0)
    t = tl.sigmoid(t) * t + tl.load(add_ptr + col, mask=mask, other=0.0)
    mean = tl.sum(t, 1)[:, None] / G
    d = t - mean
    var = tl.sum(d * d, 1)[:, None] / G
    y = d * (1.0 / tl.sqrt(var + eps))
    y = y * tl.load(w_ptr + col, mask=mask, other=0.0) + tl.load(b_ptr + col, mask=mask, other=0.0)
    tl.store(io_ptr + offs, y, mask=mask)


class _Launcher:
    """The call site's `{name}.run(...)`: the same arguments, in the same order; the
    statistics arguments ({stats}) are not read."""

    def run(self, {params}, *, stream=None):
        groups = xnumel // {g}
        _kgate_groupnorm_apply[(triton.cdiv(groups, GBLOCK),)](
            in_out_ptr0, in_ptr0, in_ptr1, in_ptr4, in_ptr5, groups, {eps},
            C={c}, G={g}, GBLOCK=GBLOCK, num_warps=NUM_WARPS)


{name} = _Launcher()
'''

NOOP = '''# kgate:kernel {name}
# kgate:template pair-nothing: {consumer} computes what this kernel wrote ({buffers})
KGATE_TEMPLATE = "pair-nothing"


class _Launcher:
    def run(self, {params}, *, stream=None):
        return None


{name} = _Launcher()
'''

APPLY_PARAMS = ["in_out_ptr0", "in_ptr0", "in_ptr1", "in_ptr2", "in_ptr3", "in_ptr4", "in_ptr5",
                "xnumel"]


def _kernel_name(text: str) -> str | None:
    m = re.search(r"^#\s*kgate:kernel\s+(\S+)", text, re.M)
    return m.group(1) if m else None


def _launch_params(text: str) -> list[str]:
    """The non-constexpr parameters of the file's last jit function (Inductor's kernel)."""
    tree = ast.parse(text)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not fns:
        return []
    fn = fns[-1]
    return [a.arg for a in fn.args.args
            if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))]


def shape_of(apply_text: str) -> dict | None:
    """C, G and eps of a group-norm apply kernel as Inductor wrote it, else None."""
    c = re.search(r"x0 = \(xindex % (\d+)\)", apply_text)
    g = re.search(r"\(x2 // (\d+)\)", apply_text)
    eps = re.search(r"tl\.full\(\[1\], ([0-9.e+-]+), tl\.float32\)\n\s*tmp\d+ = tmp\d+ \+ tmp\d+\n"
                    r"\s*tmp\d+ = libdevice\.rsqrt", apply_text)
    if not (c and g and eps) or "tl.sigmoid" not in apply_text:
        return None
    c, g = int(c.group(1)), int(g.group(1))
    if c % g or g & (g - 1):
        return None
    return {"c": c, "g": g, "eps": float(eps.group(1))}


def fused_text(name: str, partner: str, shape: dict, gblock: int = 16) -> str:
    return FUSED.format(name=name, partner=partner, params=", ".join(APPLY_PARAMS),
                        stats="in_ptr2, in_ptr3", gblock=gblock, **shape)


def noop_text(name: str, consumer: str, params: list, buffers: list) -> str:
    return NOOP.format(name=name, consumer=consumer, params=", ".join(params),
                       buffers=", ".join(buffers))


def main() -> int:
    cand = os.environ["KGATE_CANDIDATE"]
    text = open(cand).read()
    name = _kernel_name(text)
    inv = json.load(open("inventory.json"))
    entry = next((k for k in inv.get("kernels", []) if k.get("name") == name), {})
    partners = entry.get("partners", [])
    shape = shape_of(text)
    if "KGATE_TEMPLATE" in text:
        print("kgate-description: nothing more to fold (the pair is in place)")
        return 0
    if len(partners) != 1 or shape is None or _launch_params(text) != APPLY_PARAMS:
        print(f"kgate-description: {name} is not a group-norm apply with one statistics partner; "
              "nothing changed")
        return 0
    partner = partners[0]["kernel"]
    ppath = os.path.join("kernels", partner + ".py")
    ptext = open(ppath).read()
    open(cand, "w").write(fused_text(name, partner, shape))
    open(ppath, "w").write(noop_text(partner, name, _launch_params(ptext), partners[0]["buffers"]))
    print(f"kgate-description: fold {partner} into {name} (group norm over {shape['g']} "
          "contiguous elements, one pass)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
